import { entityTag, ifMatchCondition, noneMatchHit, resourceOf } from './etag';

describe('entity tags', () => {
  const work = { id: 'w1', name: 'Report', updatedAt: '2026-11-22T10:15:00.000Z' };

  it('are strong, quoted and the same for the same representation only', () => {
    expect(entityTag(work)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTag({ ...work })).toBe(entityTag(work));
    expect(entityTag({ ...work, name: 'Report 2' })).not.toBe(entityTag(work));
  });

  it('tag an envelope like the resource it holds', () => {
    expect(resourceOf({ work })).toBe(work);
    expect(resourceOf(work)).toBe(work);
    expect(resourceOf({ user: work, apiKey: work })).toEqual({ user: work, apiKey: work });
  });

  it('If-Match: strong comparison over a list, * for anything, weak tags never match', () => {
    const tag = entityTag(work);
    expect(ifMatchCondition(tag)(work)).toBe(true);
    expect(ifMatchCondition(`"a", ${tag} , "b"`)(work)).toBe(true);
    expect(ifMatchCondition('*')(work)).toBe(true);
    expect(ifMatchCondition(`W/${tag}`)(work)).toBe(false);
    expect(ifMatchCondition('"stale"')(work)).toBe(false);
    expect(ifMatchCondition('garbage')(work)).toBe(false);
  });

  it('If-None-Match: weak comparison over a list, * for anything', () => {
    const tag = entityTag(work);
    expect(noneMatchHit(undefined, tag)).toBe(false);
    expect(noneMatchHit(tag, tag)).toBe(true);
    expect(noneMatchHit(`W/${tag}`, tag)).toBe(true);
    expect(noneMatchHit(`"x", ${tag}`, tag)).toBe(true);
    expect(noneMatchHit('*', tag)).toBe(true);
    expect(noneMatchHit('"x"', tag)).toBe(false);
  });
});
