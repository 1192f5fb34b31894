// A second look at the changes `redocly diff` rates `major` by their keyword alone (rule schema-constraint-changed),
// whichever way they go. Two kinds are not breaks, and this module says so, each for a stated reason:
//
// - `additionalProperties: false` removed. In a request, the server takes more than before; in a response, it is
//   what the contract has always told clients ("ignore response properties you do not know"), and what lets /v1
//   add response properties at all. No client that worked stops working.
// - A `pattern` or `not: { pattern }` rewritten into another that accepts exactly the same strings (the portable
//   patterns of openapi/README.md). Regular languages could be compared exactly; ours are classes, stars and
//   literals, so they are compared on every string of up to three characters drawn from the edges of every class
//   the two versions name (a class's verdict changes only at its edges), plus a few thousand longer ones, in
//   ECMAScript's Unicode mode, as JSON Schema reads them. One difference is enough to keep the change breaking.
//
// Anything else keeps redocly's verdict.

const ESCAPE = /\\x([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\(.)|(.)/gsu;

/** The code points a pattern names (escaped or literal), the edges at which its classes may change their verdict. */
function edgesOf(pattern) {
  const points = new Set();
  for (const match of pattern.matchAll(ESCAPE)) {
    const text = match[1] ?? match[2];
    points.add(text ? Number.parseInt(text, 16) : (match[3] ?? match[4]).codePointAt(0));
  }
  return points;
}

/** The string predicate of a schema's `pattern` and `not: { pattern }`, as JSON Schema applies them. */
function predicateOf(schema) {
  const must = typeof schema?.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const mustNot = typeof schema?.not?.pattern === 'string' ? new RegExp(schema.not.pattern, 'u') : undefined;
  return (value) => (!must || must.test(value)) && (!mustNot || !mustNot.test(value));
}

function patternsOf(schema) {
  return [schema?.pattern, schema?.not?.pattern].filter((pattern) => typeof pattern === 'string');
}

/** Strings that tell two class-and-star patterns apart if anything does (see the module's comment). */
export function probeStrings(patterns) {
  const points = new Set([0x20, 0x30, 0x41, 0x61, 0xe9, 0x2028, 0xfeff, 0x1f600]);
  for (const pattern of patterns) {
    for (const point of edgesOf(pattern)) {
      for (const near of [point - 1, point, point + 1]) if (near >= 0 && near <= 0x10ffff) points.add(near);
    }
  }
  const alphabet = [...points].map((point) => String.fromCodePoint(point));
  const strings = [''];
  let layer = [''];
  for (let length = 1; length <= 3; length++) {
    layer = layer.flatMap((prefix) => alphabet.map((char) => prefix + char));
    strings.push(...layer);
  }
  let seed = 0x2545f491;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < 3000; i++) {
    let value = '';
    const length = 4 + (next() % 12);
    for (let j = 0; j < length; j++) value += alphabet[next() % alphabet.length];
    strings.push(value);
  }
  return strings;
}

/** Pattern pairs already compared: the same schema is reached through many operations. */
const sameLanguage = new Map();

const nodeAt = (document, pointer) =>
  pointer
    .replace(/^#\//, '')
    .split('/')
    .filter(Boolean)
    .map((key) => decodeURIComponent(key).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => node?.[key], document);

/**
 * Why a change redocly rates `major` is no break, or undefined when it stays one. `change` is an entry of the
 * report's `changes`; `base` and `current` are the two (flattened) documents it compared.
 */
export function harmlessBecause(change, base, current) {
  if (
    change.property === 'additionalProperties' &&
    change.base?.value === false &&
    !('value' in (change.revision ?? {}))
  )
    return '`additionalProperties: false` removed: clients ignore properties they do not know';
  const aboutPatterns =
    change.property === 'pattern' || change.property === 'not' || /\/(pattern|not)$/.test(change.path ?? '');
  if (aboutPatterns) {
    // The report points at the schema, or at its `pattern`/`not`, in each flattened document it compared.
    const schemaPointer = (location) => location?.pointer?.replace(/\/(pattern|not)$/, '');
    const beforeAt = schemaPointer(change.base);
    const afterAt = schemaPointer(change.revision) ?? beforeAt;
    const before = beforeAt && nodeAt(base, beforeAt);
    const after = afterAt && nodeAt(current, afterAt);
    if (!before || !after) return undefined;
    const key = JSON.stringify([
      patternsOf(before),
      before.not !== undefined,
      patternsOf(after),
      after.not !== undefined,
    ]);
    if (!sameLanguage.has(key)) {
      const [old, now] = [predicateOf(before), predicateOf(after)];
      const probes = probeStrings([...patternsOf(before), ...patternsOf(after)]);
      sameLanguage.set(
        key,
        probes.every((value) => old(value) === now(value)),
      );
    }
    if (sameLanguage.get(key))
      return 'a pattern written another way that accepts the same strings (the same verdict on every probe string)';
  }
  return undefined;
}
