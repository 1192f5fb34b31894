#!/usr/bin/env node
// Writes the `x-codeSamples` of every operation of openapi/api.yaml (a curl command and a call through the
// TypeScript client), from the operation itself and its examples: the path with its parameters' examples, the
// request body's example, the security scheme, an Idempotency-Key for creations, and for a list the client's
// `paginate`. The rendered reference shows them beside each operation; `pnpm generate` rewrites them after a
// change to the spec, and `--check` (in `pnpm lint`) fails when the committed ones are not what the spec produces.
// The client's tests type-check every TypeScript sample against the built client, so they cannot rot.
//
// Only the `x-codeSamples` of operations change: the rest of the file is written back byte for byte.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMap, parseDocument, Scalar } from 'yaml';

const specFile = fileURLToPath(new URL('../api.yaml', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const BASE_URL = 'https://api.example.com';
// The `yaml` options under which api.yaml round-trips unchanged.
const YAML_OUTPUT = { lineWidth: 0, flowCollectionPadding: false };

export function generate(specText) {
  const doc = parseDocument(specText);
  const spec = doc.toJS();
  const resolve = (node) => {
    let current = node;
    while (current && typeof current.$ref === 'string') {
      current = current.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((value, key) => value?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    }
    return current;
  };

  for (const pathPair of doc.get('paths').items) {
    const path = String(pathPair.key.value);
    for (const operationPair of pathPair.value.items) {
      const method = String(operationPair.key.value);
      if (!METHODS.includes(method)) continue;
      const item = spec.paths[path];
      const operation = item[method];
      const samples = [
        { lang: 'Shell', label: 'curl', source: curlSample(spec, resolve, path, method, item, operation) },
        { lang: 'TypeScript', label: 'TypeScript client', source: clientSample(spec, resolve, path, item, operation) },
      ];
      place(doc, operationPair.value, doc.createNode(samples));
    }
  }
  // Every source is a literal block, so it reads in the YAML as it does in the reference.
  doc.get('paths').items.forEach((pathPair) =>
    pathPair.value.items.forEach((operationPair) => {
      if (!isMap(operationPair.value)) return;
      for (const sample of operationPair.value.get('x-codeSamples')?.items ?? []) {
        const source = sample.get('source', true);
        if (source) source.type = Scalar.BLOCK_LITERAL;
      }
    }),
  );
  return doc.toString(YAML_OUTPUT);
}

/** Puts `x-codeSamples` after the operation's description (or replaces it where it is). */
function place(doc, operationMap, samplesNode) {
  const existing = operationMap.items.findIndex((pair) => pair.key.value === 'x-codeSamples');
  if (existing >= 0) {
    operationMap.items[existing].value = samplesNode;
    return;
  }
  const after = ['description', 'summary', 'operationId']
    .map((key) => operationMap.items.findIndex((pair) => pair.key.value === key))
    .find((index) => index >= 0);
  operationMap.items.splice((after ?? -1) + 1, 0, doc.createPair('x-codeSamples', samplesNode));
}

const parametersOf = (resolve, item, operation) =>
  [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
const exampleOf = (resolve, parameter) => parameter.example ?? resolve(parameter.schema)?.example;
const usesScheme = (spec, operation, scheme) =>
  (operation.security ?? spec.security ?? []).some((entry) => scheme in entry);
/** The credential a sample sends: the operator token, a recipient's answer token (from the emailed link), or an API key. */
const credentialOf = (spec, operation) =>
  usesScheme(spec, operation, 'adminToken')
    ? { shell: '$ADMIN_TOKEN', env: 'process.env.ADMIN_TOKEN' }
    : usesScheme(spec, operation, 'recipientToken')
      ? { shell: '$ANSWER_TOKEN', env: 'process.env.ANSWER_TOKEN' }
      : { shell: '$WORKS_API_KEY', env: 'process.env.WORKS_API_KEY' };

/** The path with every path parameter replaced by its example. */
function examplePath(resolve, path, item, operation) {
  const examples = Object.fromEntries(
    parametersOf(resolve, item, operation)
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => [parameter.name, exampleOf(resolve, parameter)]),
  );
  return { examples, url: path.replace(/\{([^}]+)\}/g, (_, name) => String(examples[name])) };
}

/** The request body's example, when the operation takes a body and the example says something. */
function bodyExample(resolve, operation) {
  const media = resolve(operation.requestBody)?.content?.['application/json'];
  const example = media?.example ?? resolve(media?.schema)?.example;
  return example && typeof example === 'object' && Object.keys(example).length > 0 ? example : undefined;
}

function curlSample(spec, resolve, path, method, item, operation) {
  const { url } = examplePath(resolve, path, item, operation);
  const body = bodyExample(resolve, operation);
  const takesKey = parametersOf(resolve, item, operation).some(
    (p) => p.in === 'header' && p.name === 'Idempotency-Key',
  );
  const lines = [`curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} ${BASE_URL}/v1${url}`];
  lines.push(`-H "Authorization: Bearer ${credentialOf(spec, operation).shell}"`);
  if (body) lines.push('-H "Content-Type: application/json"');
  if (takesKey) lines.push('-H "Idempotency-Key: $(uuidgen)"');
  if (body) lines.push(`-d '${JSON.stringify(body).replace(/'/g, "'\\''")}'`);
  return `${lines.join(' \\\n  ')}\n`;
}

function clientSample(spec, resolve, path, item, operation) {
  const { operationId } = operation;
  const apiKey = credentialOf(spec, operation).env;
  const { examples } = examplePath(resolve, path, item, operation);
  const body = bodyExample(resolve, operation);
  const options = {};
  if (Object.keys(examples).length > 0) options.params = { path: examples };
  if (body) options.body = body;
  const head = (imports) => [
    `import { ${imports} } from '@works-api/client';`,
    '',
    `const api = createClient({ baseUrl: '${BASE_URL}', apiKey: ${apiKey} });`,
    '',
  ];

  const hasOptions = Object.keys(options).length > 0;
  const list = listNode(resolve, operation);
  if (list) {
    const loop = `for await (const ${list} of api.paginate('${operationId}'`;
    const init = hasOptions ? `, ${literal(options, 0, loop.length + 2)}` : '';
    return [
      ...head('createClient'),
      `// Every item of every page (\`api.${operationId}()\` returns one page).`,
      `${loop}${init})) {`,
      `  console.log(${list});`,
      '}',
      '',
    ].join('\n');
  }

  const result = resultName(resolve, operation);
  const assign = result ? `const ${result.binding} = ` : '';
  const callee = `await api.${operationId}(`;
  const oneLine = `${assign}unwrap(${callee}${hasOptions ? flatLiteral(options) : ''}));`;
  const lines =
    oneLine.length <= 100
      ? [oneLine]
      : [`${assign}unwrap(`, `  ${callee}${hasOptions ? literal(options, 2, 2 + callee.length) : ''}),`, ');'];
  if (!result) return [...head('createClient, unwrap'), ...lines, ''].join('\n');
  return [...head('createClient, unwrap'), ...lines, `console.log(${result.logged});`, ''].join('\n');
}

/** How the sample names what the operation returns: `{ work }` for an envelope, `request` for a bare Request. */
function resultName(resolve, operation) {
  const bodies = Object.entries(operation.responses).filter(
    ([status, response]) => /^2/.test(status) && resolve(response)?.content?.['application/json'],
  );
  // Several success bodies (addMember: 201 `{ member }` or 202 `{ invitation }`): the sample keeps the union whole.
  if (bodies.length > 1) return { binding: 'result', logged: 'result' };
  const success = Object.entries(operation.responses).find(([status]) => /^2/.test(status));
  const schemaRef = resolve(success?.[1])?.content?.['application/json']?.schema;
  if (!schemaRef) return undefined;
  const schema = resolve(schemaRef);
  const keys = Object.keys(schema.properties ?? {});
  if (schemaRef.$ref && keys.length !== 1)
    return { binding: lowerFirst(refName(schemaRef.$ref)), logged: lowerFirst(refName(schemaRef.$ref)) };
  const names = keys.length <= 3 ? keys : keys.slice(0, 1);
  return { binding: `{ ${names.join(', ')} }`, logged: names.join(', ') };
}

/** The loop variable of a list's `paginate`, named after its node schema (`work`, `apiKey`), or undefined. */
function listNode(resolve, operation) {
  const parameters = (operation.parameters ?? []).map(resolve);
  if (!parameters.some((p) => p.in === 'query' && p.name === 'after')) return undefined;
  const body = resolve(resolve(operation.responses?.['200'])?.content?.['application/json']?.schema);
  const [connection, ...others] = Object.values(body?.properties ?? {});
  if (!connection || others.length > 0) return undefined;
  const node = resolve(connection)?.properties?.edges?.items?.properties?.node;
  return node?.$ref ? lowerFirst(refName(node.$ref)) : 'item';
}

const refName = (ref) => ref.split('/').pop();
const lowerFirst = (name) => name.charAt(0).toLowerCase() + name.slice(1);

/**
 * A TypeScript object literal that starts at `column` of a line indented by `indent`: on that line when it fits in
 * 100 columns, otherwise one property per line.
 */
function literal(value, indent, column) {
  const flat = flatLiteral(value);
  if (column + flat.length <= 100 || typeof value !== 'object' || value === null) return flat;
  const inner = ' '.repeat(indent + 2);
  const items = Array.isArray(value)
    ? value.map((v) => `${inner}${literal(v, indent + 2, inner.length)},`)
    : Object.entries(value).map(([key, v]) => {
        const prefix = `${inner}${propertyKey(key)}: `;
        return `${prefix}${literal(v, indent + 2, prefix.length)},`;
      });
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${items.join('\n')}\n${' '.repeat(indent)}${close}`;
}

function flatLiteral(value) {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(flatLiteral).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, v]) => `${propertyKey(key)}: ${flatLiteral(v)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(value);
}

const propertyKey = (key) => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const current = readFileSync(specFile, 'utf8');
  const generated = generate(current);
  if (process.argv.includes('--check')) {
    if (generated !== current) {
      console.error('✘ the x-codeSamples of openapi/api.yaml are not what the spec produces: run `pnpm generate`.');
      process.exit(1);
    }
    console.log('✔ the x-codeSamples of openapi/api.yaml match the spec');
  } else if (generated !== current) {
    writeFileSync(specFile, generated);
    console.log(`wrote the x-codeSamples of ${specFile}`);
  }
}
