import { textViolation } from './text';

describe('textViolation', () => {
  it('counts a name in code points after trimming any Unicode white space', () => {
    expect(textViolation('Name', `\u3000\u00a0${'😀'.repeat(200)}\u2003 `)).toBeUndefined();
    expect(textViolation('Name', '😀'.repeat(201))).toMatch(/at most 200/);
    expect(textViolation('Name', '\u3000\u2028\ufeff')).toBe('must not be blank');
    expect(textViolation('Name', 'a')).toBeUndefined();
  });

  it('lets a person name be empty, not longer than 200', () => {
    expect(textViolation('PersonName', '   ')).toBeUndefined();
    expect(textViolation('PersonName', ` ${'Ä'.repeat(200)} `)).toBeUndefined();
    expect(textViolation('PersonName', 'Ä'.repeat(201))).toMatch(/at most 200/);
  });

  it('refuses an unpaired surrogate, high or low, anywhere, and keeps pairs', () => {
    for (const schema of ['Name', 'PersonName', 'LongText'] as const) {
      expect(textViolation(schema, 'a\ud800b')).toMatch(/unpaired surrogate/);
      expect(textViolation(schema, 'a\udc00')).toMatch(/unpaired surrogate/);
      expect(textViolation(schema, '\udfff\ud800')).toMatch(/unpaired surrogate/);
      expect(textViolation(schema, 'e\u0301 \u200f👩🏽‍🔬')).toBeUndefined();
    }
  });
});
