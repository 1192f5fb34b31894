import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CONTROL_CHARACTERS, LONG_TEXT_MAX, longTextViolation, textViolation } from './text';

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

describe('longTextViolation (text that does not come through the validator)', () => {
  it('refuses every control character but tab, line feed and carriage return, as the schemas do', () => {
    for (const control of ['\u0000', '\u001b[31m', '\u0007', '\u000b', '\u000c', '\u007f', '\u0085', '\u009b'])
      expect(longTextViolation(`a${control}b`)).toMatch(/control characters/);
    expect(longTextViolation('line one\r\nline two\tend')).toBeUndefined();
  });

  it('refuses an unpaired surrogate, and counts 5,000 in code points', () => {
    expect(longTextViolation('a\ud800')).toMatch(/unpaired surrogate/);
    expect(longTextViolation('😀'.repeat(5000))).toBeUndefined();
    expect(longTextViolation('a'.repeat(5001))).toMatch(/at most 5,?000 characters/);
  });

  it("is the contract's LongText pattern, character for character", () => {
    const spec = parse(readFileSync(path.resolve(__dirname, '../../../../openapi/api.yaml'), 'utf8')) as {
      components: { schemas: { LongText: { pattern: string; maxLength: number } } };
    };
    const { pattern, maxLength } = spec.components.schemas.LongText;
    // The schema allows a run of anything but these characters; the page looks for one of them.
    expect(pattern).toBe(`^[^${CONTROL_CHARACTERS.source.slice(1, -1)}]*$`);
    expect(LONG_TEXT_MAX).toBe(maxLength);
  });
});
