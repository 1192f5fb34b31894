// Every `pattern` in openapi/api.yaml is portable: it compiles and means the same with and without JavaScript's
// Unicode mode (engines that see UTF-16 code units, as Ajv without unicodeRegExp and many code generators do, and
// engines that see code points, as JSON Schema, Ajv's default and Python's re do), and the three text patterns
// refuse exactly what their earlier \p{Cc}/\p{Cs} versions refused, so the server (Ajv in Unicode mode) accepts
// and refuses the same inputs as before. Checked for every code point, alone and inside names, and for seeded
// random strings. Run with `node --test` (`pnpm --filter @works-api/openapi test`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const spec = parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'api.yaml'), 'utf8'));

/** Every pattern in the spec, with where it is. */
function patternsOf(node, at = '#') {
  if (typeof node !== 'object' || node === null) return [];
  const own = typeof node.pattern === 'string' ? [{ at, pattern: node.pattern }] : [];
  return own.concat(Object.entries(node).flatMap(([key, value]) => patternsOf(value, `${at}/${key}`)));
}

/** The patterns as they were, written with Unicode property classes (only a Unicode-mode engine reads them). */
const before = {
  Name: String.raw`^[^\S\p{Cc}]*[^\s\p{Cc}\p{Cs}](?:[^\p{Cc}\p{Cs}]{0,198}[^\s\p{Cc}\p{Cs}])?[^\S\p{Cc}]*$`,
  LongText: String.raw`^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cs}]*$`,
  PersonName: String.raw`^(?:[^\S\p{Cc}]*|[^\S\p{Cc}]*[^\s\p{Cc}\p{Cs}](?:[^\p{Cc}\p{Cs}]{0,198}[^\s\p{Cc}\p{Cs}])?[^\S\p{Cc}]*)$`,
};

/** A seeded generator (mulberry32), so a failure names a reproducible string. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Characters that matter here: controls, white space, surrogates (lone), astral ones, and ordinary letters. */
const interesting = [
  '\t',
  '\n',
  '\r',
  '\x00',
  '\x1f',
  '\x7f',
  '\x85',
  '\x9f',
  ' ',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '😀',
  '𝔸',
  'a',
  'é',
  '東',
  '\u200b',
  '\u180e',
  '\ufffd',
];

function randomString(next) {
  const length = Math.floor(next() * 260);
  let text = '';
  for (let i = 0; i < length; i++) {
    const roll = next();
    text +=
      roll < 0.6
        ? interesting[Math.floor(next() * interesting.length)]
        : String.fromCodePoint(Math.floor(next() * 0x110000));
  }
  return text;
}

describe('patterns in openapi/api.yaml', () => {
  const patterns = patternsOf(spec);

  it('use no Unicode property classes and compile without and with Unicode mode', () => {
    assert.ok(patterns.length >= 6, `found ${patterns.length} patterns`);
    for (const { at, pattern } of patterns) {
      assert.doesNotMatch(pattern, /\\[pP]\{/, `${at} uses a \\p{…} class`);
      assert.doesNotThrow(() => new RegExp(pattern), `${at} does not compile without Unicode mode`);
      assert.doesNotThrow(() => new RegExp(pattern, 'u'), `${at} does not compile in Unicode mode`);
    }
  });

  const seeds = Number(process.env.PATTERN_SEED ?? 20261123);
  for (const [name, old] of Object.entries(before)) {
    describe(name, () => {
      const now = spec.components.schemas[name].pattern;
      const server = new RegExp(now, 'u'); // how the server's Ajv reads it
      const codeUnits = new RegExp(now); // how a UTF-16 engine reads it
      const previous = new RegExp(old, 'u');
      const same = (text) => {
        const expected = previous.test(text);
        assert.equal(
          server.test(text),
          expected,
          `${name} in Unicode mode decides ${JSON.stringify(text)} differently from before`,
        );
        assert.equal(
          codeUnits.test(text),
          expected,
          `${name} without Unicode mode decides ${JSON.stringify(text)} differently`,
        );
      };

      it('decides every code point the same as before, alone and inside a name, in both modes', () => {
        for (let cp = 0; cp <= 0x10ffff; cp++) {
          const c = String.fromCodePoint(cp);
          same(c);
          if (cp % 17 === 0 || cp < 0x3100) same(`a${c}b`);
        }
      });

      it('decides random strings the same as before, in both modes (seed $PATTERN_SEED)', () => {
        const next = random(seeds);
        for (let i = 0; i < 3000; i++) same(randomString(next));
      });

      it('counts astral characters as one, in both modes', () => {
        for (const length of [199, 200, 201]) same('😀'.repeat(length));
        for (const length of [199, 200, 201]) same(` ${'𝔸'.repeat(length)} `);
      });
    });
  }
});
