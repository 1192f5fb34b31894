// Every `pattern` in openapi/api.yaml is portable: written in a subset every regex dialect reads alike, it compiles
// and gives the same verdict on the same string in ECMA-262 without and with the `u` flag (Ajv, browsers, code
// generators), RE2 (Go's regexp and the gateways built on it: Google's own build, re2-wasm), Python's `re` (as
// Python's JSON Schema tools apply a pattern: `re.search`) and jsonschema-rs (the Rust validator, through its
// Python package, where it installs). Checked on every example in the spec and a table of hard strings: control
// characters, NUL, a final newline, astral characters at the length limits, Unicode spaces at the ends, RTL marks,
// combining marks, lone surrogates. Run with `node --test` (`pnpm --filter @works-api/openapi test`).
//
// What no portable pattern can say (Unicode white space, lengths after trimming, unpaired surrogates) the server
// checks (packages/server/src/domain/text.ts), and the schema's description says so.
//
// One difference is known and allowed, and only that one: Python's `re` (like Java's, .NET's and PCRE's) also
// matches a final `$` before a final newline, so it accepts `"a\n"` where the pattern ends in `$` and the other
// engines refuse it. No portable end anchor exists (`\z` is not ECMAScript, `(?!.)` not RE2), and `not` is what
// generators drop: the server refuses that string (its validator is ECMAScript), in words that name the field.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const here = path.dirname(fileURLToPath(import.meta.url));
const spec = parse(readFileSync(path.join(here, '..', 'api.yaml'), 'utf8'));
const { RE2 } = createRequire(import.meta.url)('re2-wasm');

/**
 * Every pattern in the spec, with where it is, whether it sits under `not` (a string must not match it), its
 * schema's `maxLength`, and the examples that apply (its schema's, its parameter's, its parent's for a `not`).
 */
function patternsOf(node, at = '#', context = { examples: [] }) {
  if (typeof node !== 'object' || node === null) return [];
  const examples = [...context.examples, node.example].filter((example) => typeof example === 'string');
  const own =
    typeof node.pattern === 'string'
      ? [
          {
            at,
            pattern: node.pattern,
            negated: context.negated ?? false,
            maxLength: node.maxLength ?? context.maxLength,
            examples,
          },
        ]
      : [];
  return own.concat(
    Object.entries(node).flatMap(([key, value]) => {
      if (key === 'example' || key === 'examples' || key === 'x-codeSamples') return [];
      if (key === 'not') return patternsOf(value, `${at}/not`, { examples, negated: true, maxLength: node.maxLength });
      if (key === 'schema' && typeof node.in === 'string') return patternsOf(value, `${at}/schema`, { examples });
      return patternsOf(value, `${at}/${key}`);
    }),
  );
}

/**
 * The portable subset, as a reader can check it: printable ASCII only; no escapes but `\xHH` and escaped
 * punctuation (no `\d \w \s \b \p{…} \u…`: each dialect reads them differently or not at all); no `(?…)` (look-
 * arounds and flags: RE2 has none); no `not` around a pattern (code generators drop it without a word: "only these
 * characters" is `^[…]*$`); `$` only as the last character (see the known difference above); and a bounded
 * quantifier only on a literal or a class of ASCII characters (a UTF-16 engine counts an astral character twice, a
 * code point engine once).
 */
function portabilityProblems(pattern) {
  const problems = [];
  if (!/^[\x20-\x7E]*$/.test(pattern)) problems.push('has a character outside printable ASCII');
  for (const [escape] of pattern.matchAll(/\\(x[0-9A-Fa-f]{2}|.)/g)) {
    if (!/^\\(x[0-9A-Fa-f]{2}|[\\^$.|?*+()[\]{}/-])$/.test(escape)) problems.push(`uses the escape ${escape}`);
  }
  const plain = pattern.replace(/\\(x[0-9A-Fa-f]{2}|.)/g, 'E'); // escapes out of the way
  if (plain.includes('(?')) problems.push('uses (?…) (a look-around, a flag or a named group)');
  if (plain.slice(0, -1).includes('$')) problems.push('uses $ before its end');
  for (const match of plain.matchAll(/\{\d+(,\d*)?\}/g)) {
    const before = plain.slice(0, match.index);
    if (before.endsWith(')')) problems.push('bounds a group with {m,n}');
    if (before.endsWith(']') && /\[\^[^\]]*\]$/.test(before)) problems.push('bounds a negated class with {m,n}');
    if (before.endsWith(']') && [...classText(pattern, match.index)].some((c) => c.charCodeAt(0) > 0x7f))
      problems.push('bounds a non-ASCII class');
  }
  return problems;
}
/** The text of the class that ends just before `end` in `pattern` (escapes decoded: `\xA0` → U+00A0). */
function classText(pattern, end) {
  const start = pattern.lastIndexOf('[', end);
  return pattern.slice(start, end).replace(/\\x([0-9A-Fa-f]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

const repeat = (text, count) => text.repeat(Math.max(count, 0));
/** Strings every pattern is tried on. */
const hard = [
  ['empty', ''],
  ['a letter', 'a'],
  ['NUL', '\u0000'],
  ['NUL inside', 'a\u0000b'],
  ['tab', 'a\tb'],
  ['final newline', 'a\n'],
  ['final CRLF', 'a\r\n'],
  ['leading newline', '\na'],
  ['escape', 'a\u001bb'],
  ['DEL', 'a\u007f'],
  ['C1 next line', 'a\u0085'],
  ['C1 last', '\u009f'],
  ['space at both ends', ' a '],
  ['NBSP at both ends', '\u00a0a\u00a0'],
  ['NBSP only', '\u00a0'],
  ['ideographic space at both ends', '\u3000a\u3000'],
  ['em space only', '\u2003'],
  ['line separator', '\u2028a\u2029'],
  ['BOM first', '\ufeffa'],
  ['zero-width space', '\u200b'],
  ['Mongolian vowel separator', '\u180e'],
  ['RTL mark', '\u200fa\u200f'],
  ['RTL override', '\u202eabc'],
  ['Arabic', '\u0627\u0644\u0639\u0631\u0628\u064a\u0629'],
  ['combining mark alone', '\u0301'],
  ['combining mark on a letter', 'e\u0301'],
  ['emoji', '😀'],
  ['emoji ZWJ sequence', '👩🏽‍🔬'],
  ['astral math letter', '𝔸'],
  ['replacement character', '\ufffd'],
  ['last code point', '\u{10ffff}'],
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate inside', 'a\udc00b'],
  ['reversed pair', '\udc00\ud800'],
  ['valid pair written as escapes', '\udbff\udfff'],
  ['UUID', '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b'],
  ['UUID upper case', '0193A1B2-7C3D-7E4F-8A9B-0C1D2E3F4A5B'],
  ['UUID and a newline', '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b\n'],
  ['snake_case', 'not_found'],
  ['snake_case and a newline', 'not_found\n'],
  ['digits', '1795421100'],
  ['digits and a newline', '1795421100\n'],
  ['whsec secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwC2Y5pL1pP4k='],
  ['whsec secret and a newline', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwC2Y5pL1pP4k=\n'],
  ['whsec secret of emoji', `whsec_${repeat('😀', 43)}=`],
  ['43 emoji', repeat('😀', 43)],
  ['visible ASCII', '!"#%&()*+,-./0123456789:;<=>?@AZ[]^_`az{|}~'],
];

/** The strings for one pattern: the hard ones, and its examples broken at the edges and at its length limits. */
function stringsFor({ examples, maxLength }) {
  const derived = examples.flatMap((example) => [
    ['example', example],
    ['example and a newline', `${example}\n`],
    ['example after a newline', `\n${example}`],
    ['example and NUL', `${example}\u0000`],
    ['example in NBSPs', `\u00a0${example}\u00a0`],
    ['example in ideographic spaces', `\u3000${example}\u3000`],
    ['example with an RTL mark', `\u200f${example}`],
    ['example with a combining mark', `${example}\u0301`],
    ['example with a lone surrogate', `${example}\ud83d`],
    ['example in emoji', `😀${example}😀`],
  ]);
  const limits = [...new Set([200, maxLength].filter((limit) => typeof limit === 'number'))].flatMap((limit) =>
    [limit - 1, limit, limit + 1].flatMap((length) => [
      [`${length} emoji`, repeat('😀', length)],
      [`${length} letters`, repeat('a', length)],
      [`${length} CJK`, repeat('東', length)],
      [`${length} emoji in spaces`, ` ${repeat('😀', length - 2)} `],
    ]),
  );
  return [...hard, ...derived, ...limits];
}

const hasLoneSurrogate = (text) => /\p{Cs}/u.test(text);

/** The Python engines' verdicts (python-engines.py), with `python` the interpreter to use. */
function pythonVerdicts(python, patterns, strings) {
  const run = spawnSync(python, [path.join(here, 'python-engines.py')], {
    input: JSON.stringify({ patterns, strings }),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`${python} python-engines.py failed: ${run.error ?? run.stderr}`);
  return JSON.parse(run.stdout);
}

/**
 * A Python that has jsonschema-rs: $JSONSCHEMA_RS_PYTHON, or a virtual environment under node_modules/.cache made
 * on first use with pip (from the machine's package index, if it has one: PyPI itself is out of reach here). The
 * reason it is missing otherwise, so that the test is skipped out loud.
 */
function jsonschemaRsPython() {
  const imports = (python) => spawnSync(python, ['-c', 'import jsonschema_rs'], { timeout: 30_000 }).status === 0;
  if (process.env.JSONSCHEMA_RS_PYTHON)
    return imports(process.env.JSONSCHEMA_RS_PYTHON)
      ? { python: process.env.JSONSCHEMA_RS_PYTHON }
      : { reason: `JSONSCHEMA_RS_PYTHON=${process.env.JSONSCHEMA_RS_PYTHON} cannot import jsonschema_rs` };
  const venv = path.join(here, '..', '..', 'node_modules', '.cache', 'jsonschema-rs-venv');
  const python = path.join(venv, 'bin', 'python');
  if (!existsSync(python)) {
    mkdirSync(path.dirname(venv), { recursive: true });
    const made = spawnSync('python3', ['-m', 'venv', venv], { encoding: 'utf8', timeout: 120_000 });
    if (made.status !== 0) return { reason: `python3 -m venv failed: ${made.stderr || made.error}` };
  }
  if (!imports(python)) {
    const pip = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--retries',
        '0',
        '--timeout',
        '5',
        'jsonschema-rs',
      ],
      { encoding: 'utf8', timeout: 180_000 },
    );
    if (pip.status !== 0 || !imports(python))
      return {
        reason: `pip could not install jsonschema-rs here: ${(pip.stderr || String(pip.error)).trim().split('\n').at(-1)}`,
      };
  }
  return { python };
}

describe('patterns in openapi/api.yaml', () => {
  const patterns = patternsOf(spec);
  const strings = patterns.map(stringsFor);
  const allStrings = [...new Set(strings.flatMap((list) => list.map(([, text]) => text)))];
  const indexOf = new Map(allStrings.map((text, i) => [text, i]));

  it('are all found, and written in the portable subset', () => {
    assert.ok(patterns.length >= 10, `found ${patterns.length} patterns`);
    const problems = patterns.flatMap(({ at, pattern }) => portabilityProblems(pattern).map((p) => `${at} ${p}`));
    const negated = patterns.filter(({ negated }) => negated).map(({ at }) => `${at}: a pattern under \`not\``);
    assert.deepEqual([...problems, ...negated], []);
  });

  // Each engine: a function from pattern to (string → verdict), or the compile error; null = cannot take it.
  const javascript = (flags) => (pattern) => {
    const regex = new RegExp(pattern, flags);
    return (text) => regex.test(text);
  };
  const re2 = (pattern) => {
    const regex = new RE2(pattern, 'u'); // re2-wasm always reads UTF-8 code points
    return (text) => regex.test(text);
  };
  const engines = { 'ECMA-262': javascript(''), 'ECMA-262 u': javascript('u'), RE2: re2 };

  /** engine → pattern index → string index → verdict (true, false, null), or a compile error string. */
  const verdicts = {};
  for (const [name, compile] of Object.entries(engines)) {
    verdicts[name] = patterns.map(({ pattern }) => {
      let test;
      try {
        test = compile(pattern);
      } catch (error) {
        return String(error.message);
      }
      return allStrings.map(test);
    });
  }
  const python = pythonVerdicts(
    'python3',
    patterns.map(({ pattern }) => pattern),
    allStrings,
  );
  verdicts["Python's re"] = python.re.map((row, i) => row ?? python.errors.re[i]);
  const rs = jsonschemaRsPython();
  if (rs.python) {
    const withRs = pythonVerdicts(
      rs.python,
      patterns.map(({ pattern }) => pattern),
      allStrings,
    );
    verdicts['jsonschema-rs'] = withRs['jsonschema-rs'].map((row, i) => row ?? withRs.errors['jsonschema-rs'][i]);
  }

  for (const engine of [...Object.keys(engines), "Python's re", 'jsonschema-rs']) {
    it(
      `compile in ${engine}`,
      { skip: verdicts[engine] ? false : `jsonschema-rs is not installable here (${rs.reason})` },
      () => {
        const failed = patterns.flatMap(({ at }, i) =>
          typeof verdicts[engine][i] === 'string' ? [`${at}: ${verdicts[engine][i]}`] : [],
        );
        assert.deepEqual(failed, []);
      },
    );
  }

  it('give every engine the same verdict on every example and hard string', () => {
    const present = Object.keys(verdicts);
    const disagreements = [];
    let compared = 0;
    let known = 0;
    patterns.forEach(({ at, pattern }, p) => {
      for (const [label, text] of strings[p]) {
        const s = indexOf.get(text);
        const seen = present
          .map((engine) => [engine, Array.isArray(verdicts[engine][p]) ? verdicts[engine][p][s] : undefined])
          .filter(([, verdict]) => verdict !== undefined);
        // null: the engine cannot hold the string at all (a Rust string cannot hold a lone surrogate; serde_json
        // refuses "\ud800"), which only a lone surrogate may cause. The server refuses those (domain/text.ts).
        for (const [engine, verdict] of seen)
          if (verdict === null && !hasLoneSurrogate(text))
            disagreements.push(`${engine} cannot take ${label} ${JSON.stringify(text.slice(0, 40))} for ${at}`);
        // The one known difference (see the top of this file): Python's `$` before a final newline.
        const pythonsDollar = (engine, verdict) =>
          engine === "Python's re" &&
          verdict === true &&
          pattern.endsWith('$') &&
          text.endsWith('\n') &&
          new RegExp(pattern, 'u').test(text.slice(0, -1));
        const decided = seen.filter(([engine, verdict]) => verdict !== null && !pythonsDollar(engine, verdict));
        known += seen.length - decided.length - seen.filter(([, verdict]) => verdict === null).length;
        compared += decided.length;
        if (new Set(decided.map(([, verdict]) => verdict)).size > 1)
          disagreements.push(
            `${at} ${pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern} on ${label} ${JSON.stringify(text.slice(0, 40))}: ${decided.map(([e, v]) => `${e} ${v}`).join(', ')}`,
          );
      }
    });
    assert.deepEqual(disagreements.slice(0, 20), [], `${disagreements.length} disagreements`);
    console.log(
      `portable patterns: ${patterns.length} patterns, ${allStrings.length} strings, ${compared} verdicts agreed across ${present.join(', ')}, ${known} known differences (Python's $ before a final newline)` +
        (rs.python ? '' : ` (jsonschema-rs skipped: ${rs.reason})`),
    );
  });

  it('accept their own examples (a `not` pattern refuses them) in every engine', () => {
    const wrong = [];
    patterns.forEach(({ at, negated, examples }, p) => {
      for (const example of examples)
        for (const engine of Object.keys(verdicts)) {
          const verdict = Array.isArray(verdicts[engine][p]) ? verdicts[engine][p][indexOf.get(example)] : undefined;
          if (verdict !== !negated) wrong.push(`${engine}: ${at} on ${JSON.stringify(example)} is ${verdict}`);
        }
    });
    assert.deepEqual(wrong, []);
  });

  it('refuse what the portable part promises, in every engine (control characters in a name, a blank name)', () => {
    const names = patterns.filter(({ at }) => /\/schemas\/(Name|PersonName)$/.test(at));
    assert.equal(names.length, 2);
    for (const { pattern } of names) {
      for (const text of ['a\u0000b', 'a\tb', 'a\nb', '\u001b', 'a\u007f', 'a\u0085', '\u009f'])
        for (const flags of ['', 'u'])
          assert.ok(!new RegExp(pattern, flags).test(text), `${pattern} ${JSON.stringify(text)}`);
      assert.ok(!new RE2(pattern, 'u').test('a\u0085'), 'RE2 refuses a C1 control');
    }
    const name = names.find(({ at }) => at.endsWith('/Name'));
    for (const blank of ['', ' ', '\u00a0 \u00a0']) assert.ok(!new RegExp(name.pattern, 'u').test(blank));
  });
});
