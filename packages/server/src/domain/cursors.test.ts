import { createHmac, randomBytes } from 'node:crypto';
import { Cursors, type ListBinding } from './cursors';

const id = '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
const works: ListBinding = { operationId: 'listWorks', path: { tenant_id: id }, filters: { discarded: 'false' } };
const key = randomBytes(32);
const cursors = new Cursors([key]);
const refused = expect.objectContaining({ code: 'invalid_cursor' });

describe('cursors: opaque, tamper-evident, bound to their list', () => {
  it('read back the id they were issued for, in the list that issued them', () => {
    const cursor = cursors.issue(works, id);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(cursor).not.toContain(id.replaceAll('-', '').slice(0, 8));
    expect(cursors.read(works, cursor)).toBe(id);
    // The same list written in another order is the same list.
    expect(cursors.read({ ...works, filters: { discarded: 'false' }, path: { tenant_id: id } }, cursor)).toBe(id);
  });

  it.each([
    ['another list', { ...works, operationId: 'listTenants', path: {}, filters: {} }],
    ['another parent', { ...works, path: { tenant_id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5c' } }],
    ['other filters', { ...works, filters: { discarded: 'true' } }],
    ['a filter more', { ...works, filters: { discarded: 'false', q: 'report' } }],
  ])('refuse a cursor of %s', (_, other) => {
    expect(() => cursors.read(other, cursors.issue(works, id))).toThrow(refused);
  });

  it('refuse forged, altered and foreign cursors, and those of the unsigned kind handed out before', () => {
    const cursor = cursors.issue(works, id);
    const bytes = Buffer.from(cursor, 'base64url');
    const flipped = (at: number) => {
      const copy = Buffer.from(bytes);
      copy[at]! ^= 1;
      return copy.toString('base64url');
    };
    for (const bad of [
      flipped(5), // another id, same tag
      flipped(30), // the tag altered
      flipped(0), // another version
      new Cursors([randomBytes(32)]).issue(works, id), // another server's secret
      Buffer.from(`v1:${id}`).toString('base64url'), // the cursors of the previous version
      '',
      'not a cursor',
      `${cursor}A`,
      cursor.slice(0, -1),
    ])
      expect(() => cursors.read(works, bad)).toThrow(refused);
  });

  it.each([32, 64, 65, 100])('carry the HMAC-SHA256 of the list and the id, with a key of %i bytes', (length) => {
    const someKey = randomBytes(length);
    const bytes = Buffer.from(new Cursors([someKey]).issue(works, id), 'base64url');
    const list = JSON.stringify(['works-api cursor', 1, 'listWorks', [['tenant_id', id]], [['discarded', 'false']]]);
    const expected = createHmac('sha256', someKey).update(list).update('\0').update(bytes.subarray(1, 17)).digest();
    expect(bytes.subarray(17)).toEqual(expected.subarray(0, 16));
  });

  it('keep working through a key rotation: the new key signs, the old one still verifies', () => {
    const before = cursors.issue(works, id);
    const rotated = new Cursors([randomBytes(32), key]);
    expect(rotated.read(works, before)).toBe(id);
    expect(() => new Cursors([key]).read(works, rotated.issue(works, id))).toThrow(refused);
  });
});
