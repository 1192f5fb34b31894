// `redocly diff` compares schemas structurally and does not resolve composition: a response whose schema turns from
// `Problem` into `allOf: [Problem, { code: const }]`, or into a `oneOf` of such problem types, reads to it as "type
// widened from object to any, every property removed", although no body a client can receive changed. Before the
// comparison, both versions of the spec go through `flattenCompositions`, which rewrites every composed schema into
// the plain object a client sees:
//
// - `allOf` of objects → one object: the properties of every member (a property declared twice merges, the later
//   narrowing the earlier: `code: { type: string }` + `code: { const: x }`), every member's `required`, closed when a
//   member is closed;
// - `oneOf` of objects → the envelope of the alternatives: every property any alternative has, the properties all of
//   them require, and a property whose alternatives each fix one `const` becomes an `enum` of those values (so a
//   problem type added to a response is a new enum value in a response: breaking, as it should be for a closed set).
//
// Other schemas are left as they are, `$ref`s included, so messages still point at named components.

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

export function flattenCompositions(spec) {
  const resolve = (node) => {
    let current = node;
    for (let depth = 0; isObject(current) && typeof current.$ref === 'string' && depth < 20; depth++) {
      current = current.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((value, key) => value?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    }
    return current;
  };
  const done = new WeakMap();

  const flatten = (node) => {
    if (Array.isArray(node)) return node.map(flatten);
    if (!isObject(node)) return node;
    if (done.has(node)) return done.get(node);
    const out = {};
    done.set(node, out);
    for (const [key, value] of Object.entries(node))
      out[key] = key === 'example' || key === 'examples' ? value : flatten(value);
    if (Array.isArray(out.allOf))
      mergeAllOf(
        out,
        out.allOf.map((member) => flatten(resolve(member))),
      );
    if (Array.isArray(out.oneOf))
      envelope(
        out,
        out.oneOf.map((member) => flatten(resolve(member))),
      );
    return out;
  };

  const mergeAllOf = (target, members) => {
    if (!members.every(isObject)) return;
    delete target.allOf;
    for (const member of members) {
      for (const [key, value] of Object.entries(member)) {
        if (key === 'properties') {
          target.properties ??= {};
          for (const [name, schema] of Object.entries(value)) {
            target.properties[name] = { ...(resolve(target.properties[name]) ?? {}), ...resolve(schema) };
          }
        } else if (key === 'required') {
          target.required = [...new Set([...(target.required ?? []), ...value])];
        } else if (key === 'additionalProperties') {
          if (value === false || target.additionalProperties === undefined) target.additionalProperties = value;
        } else if (!(key in target)) {
          target[key] = value;
        }
      }
    }
  };

  const envelope = (target, alternatives) => {
    if (!alternatives.every((alternative) => isObject(alternative) && alternative.properties)) return;
    delete target.oneOf;
    target.type = 'object';
    target.properties = {};
    for (const name of new Set(alternatives.flatMap((alternative) => Object.keys(alternative.properties)))) {
      const schemas = alternatives.map((alternative) => resolve(alternative.properties[name])).filter(Boolean);
      const merged = Object.assign({}, ...schemas);
      if (schemas.length === alternatives.length && schemas.every((schema) => 'const' in schema)) {
        delete merged.const;
        merged.enum = [...new Set(schemas.map((schema) => schema.const))];
      }
      target.properties[name] = merged;
    }
    target.required = alternatives
      .map((alternative) => alternative.required ?? [])
      .reduce((common, required) => common.filter((name) => required.includes(name)));
    if (alternatives.every((alternative) => alternative.additionalProperties === false))
      target.additionalProperties = false;
  };

  return flatten(spec);
}
