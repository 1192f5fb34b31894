// Our own lint rules for openapi/api.yaml: what we promise partners (problem+json errors, examples everywhere)
// and API security practice (every operation authenticated, bounded input, no undeclared properties).
// Each rule is small on purpose; the Redocly visitor calls them on every node of the given type.

import { linkProblems } from './operation-links.mjs';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const PROBLEM_REF = '#/components/schemas/Problem';
const PROBLEM_MEDIA_TYPE = 'application/problem+json';
const CACHE_CONTROL_REF = '#/components/headers/CacheControl';

const typesOf = (schema) => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);
const resolved = (node, ctx) => (node && node.$ref ? ctx.resolve(node).node : node);
// Operations under `webhooks:` are calls we make to partners' receivers: their security and errors are not ours.
const isWebhook = (ctx) => ctx.location.pointer.startsWith('#/webhooks/');

/** A schema that is one problem type: `allOf` the Problem schema, with a `const` code (see ProblemTypes). */
const isProblemType = (schema, ctx) =>
  (resolved(schema, ctx)?.allOf ?? []).some((member) => member.$ref === PROBLEM_REF) &&
  problemTypeCode(resolved(schema, ctx)) !== undefined;
const problemTypeCode = (schema) =>
  (schema.allOf ?? []).map((member) => member.properties?.code?.const).find((code) => typeof code === 'string');

/**
 * Every 4xx (and 5xx) response is `application/problem+json` whose schema is a problem type or a `oneOf` of problem
 * types (so each response declares the closed set of codes it can carry), with an example (its own, or its problem
 * types'), and every operation documents the 4xx responses it can produce: 401 when authenticated, 400 when it
 * takes input, 404 when its path names a resource, 413 and 415 when it takes a body.
 */
function ProblemResponses() {
  return {
    PathItem: {
      enter(pathItem, ctx, { key: path }) {
        if (isWebhook(ctx)) return;
        for (const method of HTTP_METHODS) {
          const operation = pathItem[method];
          if (!operation) continue;
          const where = ctx.location.child([method]);
          const responses = operation.responses ?? {};
          const parameters = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map((p) =>
            resolved(p, ctx),
          );
          const expected = new Set(['401']);
          if (parameters.length > 0 || operation.requestBody) expected.add('400');
          if (parameters.some((p) => p && p.in === 'path')) expected.add('404');
          if (operation.requestBody) {
            expected.add('413');
            expected.add('415');
          }
          for (const status of expected) {
            if (!(status in responses)) {
              ctx.report({
                message: `${method.toUpperCase()} ${path} must document its ${status} response.`,
                location: where.child(['responses']).key(),
              });
            }
          }
          for (const [status, response] of Object.entries(responses)) {
            if (!/^[45]/.test(status)) continue;
            const at = where.child(['responses', status]);
            const body = resolved(response, ctx);
            const content = body?.content ?? {};
            const media = content[PROBLEM_MEDIA_TYPE];
            if (Object.keys(content).length !== 1 || !media) {
              ctx.report({ message: `The ${status} response must be ${PROBLEM_MEDIA_TYPE} only.`, location: at });
              continue;
            }
            const schema = media.schema ?? {};
            const types = schema.oneOf ?? [schema];
            if (!types.every((type) => type.$ref && isProblemType(type, ctx))) {
              ctx.report({
                message: `The ${status} response's schema must be a problem type (allOf ${PROBLEM_REF} with a const code), or a oneOf of them.`,
                location: at,
              });
            }
            const typesHaveExamples = types.every((type) => resolved(type, ctx)?.example !== undefined);
            if (media.example === undefined && media.examples === undefined && !typesHaveExamples) {
              ctx.report({ message: `The ${status} response needs an example.`, location: at });
            }
          }
        }
      },
    },
  };
}

/**
 * Every response of an operation declares `Cache-Control` as the CacheControl header (`no-store`): no cache may keep
 * an API response, some of which show a secret once, and the contract says so wherever it lists a response's
 * headers, so that a new operation cannot leave it out.
 */
function NoStoreResponses() {
  return {
    PathItem: {
      enter(pathItem, ctx, { key: path }) {
        if (isWebhook(ctx)) return;
        for (const method of HTTP_METHODS) {
          const operation = pathItem[method];
          if (!operation) continue;
          for (const [status, response] of Object.entries(operation.responses ?? {})) {
            if (resolved(response, ctx)?.headers?.['Cache-Control']?.$ref === CACHE_CONTROL_REF) continue;
            ctx.report({
              message: `${method.toUpperCase()} ${path}: the ${status} response must declare Cache-Control ($ref ${CACHE_CONTROL_REF}).`,
              location: ctx.location.child([method, 'responses', status]),
            });
          }
        }
      },
    },
  };
}

/** Every named schema shows a realistic example, so the reference can show one for every body. */
function SchemaExample() {
  return {
    NamedSchemas: {
      enter(schemas, ctx) {
        for (const [name, schema] of Object.entries(schemas)) {
          if (schema.example === undefined && schema.examples === undefined) {
            ctx.report({
              message: `Schema \`${name}\` needs an \`example\`.`,
              location: ctx.location.child([name]).key(),
            });
          }
        }
      },
    },
  };
}

/** Every parameter shows an example (its own or its schema's). */
function ParameterExample() {
  return {
    Parameter(parameter, ctx) {
      const schema = resolved(parameter.schema, ctx) ?? {};
      const has = (node) =>
        node.example !== undefined ||
        node.examples !== undefined ||
        node.default !== undefined ||
        Array.isArray(node.enum);
      if (!has(parameter) && !has(schema)) {
        ctx.report({ message: `Parameter \`${parameter.name}\` needs an example.`, location: ctx.location.key() });
      }
    },
  };
}

/** Strings have a maximum length (or a fixed set of values) and arrays a maximum size: no unbounded input. */
function BoundedValues() {
  return {
    Schema(schema, ctx) {
      const types = typesOf(schema);
      const fixed = schema.enum !== undefined || schema.const !== undefined;
      if (types.includes('string') && !fixed && schema.maxLength === undefined) {
        ctx.report({ message: 'A string schema needs `maxLength` (or `enum`/`const`).', location: ctx.location.key() });
      }
      if (types.includes('array') && schema.maxItems === undefined) {
        ctx.report({ message: 'An array schema needs `maxItems`.', location: ctx.location.key() });
      }
    },
  };
}

/**
 * The direction rule: what we TAKE is closed, what we SEND is open. Every object schema reachable from a request
 * body or a parameter declares every property it allows (`additionalProperties: false`, or
 * `unevaluatedProperties: false`), so unknown input is refused; no object schema reachable from a response, a
 * response header or a webhook payload closes itself, so that a partner's strict validation of an older spec keeps
 * passing when a response gains a property. A schema reachable both ways is reported: split it into an input form
 * and an output form. A member of an `allOf` that only narrows properties its closed sibling declares (a problem
 * type fixing `code`) is closed by that sibling.
 */
function ObjectDirection() {
  return {
    Root: {
      enter(root, ctx) {
        const taken = new Map();
        const sent = new Map();
        const roots = { taken: [], sent: [] };
        for (const [path, item] of Object.entries(root.paths ?? {})) {
          if (item.parameters) roots.taken.push(['paths', path, 'parameters']);
          for (const method of HTTP_METHODS) {
            if (!item[method]) continue;
            roots.taken.push(['paths', path, method, 'parameters'], ['paths', path, method, 'requestBody']);
            roots.sent.push(['paths', path, method, 'responses']);
          }
        }
        for (const [name, item] of Object.entries(root.webhooks ?? {})) {
          for (const method of HTTP_METHODS) {
            if (item[method])
              roots.sent.push(['webhooks', name, method, 'requestBody'], ['webhooks', name, method, 'parameters']);
          }
        }
        for (const at of roots.taken) collectObjects(root, at, taken);
        for (const at of roots.sent) collectObjects(root, at, sent);
        for (const [key, { at, node, narrowing }] of taken) {
          if (sent.has(key)) {
            ctx.report({
              message:
                'This object is both taken (a request) and sent (a response or webhook): split it into an input schema (closed) and an output schema (open).',
              location: ctx.location.child(at).key(),
            });
          } else if (!narrowing && node.additionalProperties !== false && node.unevaluatedProperties !== false) {
            ctx.report({
              message:
                'An object schema in a request needs `additionalProperties: false`: undeclared input is refused.',
              location: ctx.location.child(at).key(),
            });
          }
        }
        for (const [key, { at, node }] of sent) {
          if (taken.has(key)) continue;
          if (node.additionalProperties === false || node.unevaluatedProperties === false) {
            ctx.report({
              message:
                'An object schema we send (a response or a webhook payload) must not forbid additional properties: partners validating an older spec must keep passing when it gains one.',
              location: ctx.location
                .child([...at, node.additionalProperties === false ? 'additionalProperties' : 'unevaluatedProperties'])
                .key(),
            });
          }
        }
      },
    },
  };
}

const SCHEMA_DATA = new Set([
  'example',
  'examples',
  'x-codeSamples',
  'links',
  'discriminator',
  'enum',
  'const',
  'default',
]);
const pointerOf = (ref) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
const nodeAt = (root, at) => at.reduce((value, key) => value?.[key], root);

/**
 * Every object schema reachable from `at` in `root` (following each `$ref` once), keyed by its location, with
 * whether it is an `allOf` member that only narrows the properties a closed sibling declares.
 */
function collectObjects(root, at, into, visited = new Set(), narrowing = false) {
  const node = nodeAt(root, at);
  if (Array.isArray(node)) return node.forEach((_, index) => collectObjects(root, [...at, index], into, visited));
  if (!node || typeof node !== 'object') return;
  if (typeof node.$ref === 'string') {
    const target = pointerOf(node.$ref);
    if (visited.has(target.join('/'))) return;
    visited.add(target.join('/'));
    return collectObjects(root, target, into, visited);
  }
  if (typesOf(node).includes('object') || node.properties !== undefined)
    into.set(at.join('/'), { at, node, narrowing });
  const closedSiblings = new Set(
    (node.allOf ?? [])
      .map((member) => (member.$ref ? nodeAt(root, pointerOf(member.$ref)) : member))
      .filter((member) => member && member.additionalProperties === false)
      .flatMap((member) => Object.keys(member.properties ?? {})),
  );
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_DATA.has(key)) continue;
    if (key === 'allOf' && Array.isArray(value)) {
      value.forEach((member, index) => {
        const names = Object.keys(member.properties ?? {});
        const narrows = !member.$ref && member.type === undefined && names.every((name) => closedSiblings.has(name));
        collectObjects(root, [...at, key, index], into, visited, narrows);
      });
    } else collectObjects(root, [...at, key], into, visited);
  }
}

/** Every operation is authenticated: a non-empty security requirement, and no anonymous (`{}`) alternative. */
function OperationSecurity() {
  let rootSecurity;
  return {
    Root: {
      enter(root) {
        rootSecurity = root.security;
      },
    },
    Operation(operation, ctx) {
      if (isWebhook(ctx)) return;
      const security = operation.security ?? rootSecurity ?? [];
      // An operation that is itself how a credential is obtained (signing in) says why it needs none.
      const why = operation['x-no-credential'];
      if (security.length === 0 && typeof why === 'string' && why.trim().length >= 20) return;
      if (security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)) {
        ctx.report({
          message: `Operation \`${operation.operationId}\` must require authentication (no empty or anonymous security).`,
          location: ctx.location.child(['security']).key(),
        });
      }
    },
  };
}

/**
 * Every operation an API key authenticates (`bearerAuth`) names exactly one scope it needs, `x-required-scope`, a
 * value of the `Scope` schema; operations authenticated otherwise (the operator's and the recipient's tokens) name
 * none. The server reads the scope from here (packages/server/src/http/spec.ts): there is no second table.
 */
function OperationScope() {
  let rootSecurity;
  let scopes = [];
  return {
    Root: {
      enter(root) {
        rootSecurity = root.security;
        scopes = root.components?.schemas?.Scope?.enum ?? [];
      },
    },
    Operation(operation, ctx) {
      if (isWebhook(ctx)) return;
      const security = operation.security ?? rootSecurity ?? [];
      const byApiKey = security.some((requirement) => Object.hasOwn(requirement, 'bearerAuth'));
      const scope = operation['x-required-scope'];
      if (!byApiKey) {
        if (scope !== undefined)
          ctx.report({
            message: `Operation \`${operation.operationId}\` is not authenticated by an API key: it takes no \`x-required-scope\`.`,
            location: ctx.location.child(['x-required-scope']).key(),
          });
        return;
      }
      if (typeof scope !== 'string' || !scopes.includes(scope)) {
        ctx.report({
          message: `Operation \`${operation.operationId}\` must name exactly one scope of the \`Scope\` schema in \`x-required-scope\`.`,
          location: ctx.location.key(),
        });
      }
    },
  };
}

/**
 * Problem types (schemas `allOf` the Problem schema) fix their `code` and `status` with `const`, are titled by their
 * code, and no two share a code: the set of codes is closed, and each one means one thing. The one exception says
 * so: `x-variant-of: <ProblemType>` is the same problem (same code and status) with other bounds for the operations
 * that answer it (a bulk send's longer `errors`), and names a problem type that is not itself a variant.
 */
function ProblemTypes() {
  return {
    NamedSchemas: {
      enter(schemas, ctx) {
        const seen = new Map();
        for (const [name, schema] of Object.entries(schemas)) {
          if (!(schema.allOf ?? []).some((member) => member.$ref === PROBLEM_REF)) continue;
          const where = ctx.location.child([name]);
          const code = problemTypeCode(schema);
          const status = (schema.allOf ?? []).map((member) => member.properties?.status?.const).find(Number.isInteger);
          if (code === undefined || status === undefined) {
            ctx.report({
              message: `Problem type \`${name}\` must fix \`code\` and \`status\` with \`const\`.`,
              location: where.key(),
            });
            continue;
          }
          if (schema.title !== code)
            ctx.report({ message: `Problem type \`${name}\` must be titled \`${code}\`.`, location: where.key() });
          const variantOf = schema['x-variant-of'];
          if (variantOf !== undefined) {
            const original = schemas[variantOf];
            if (!original || original['x-variant-of'] !== undefined || problemTypeCode(original) !== code)
              ctx.report({
                message: `\`${name}\` is \`x-variant-of\` \`${variantOf}\`, which must be a problem type with the code \`${code}\`.`,
                location: where.key(),
              });
            continue;
          }
          if (seen.has(code))
            ctx.report({ message: `\`${name}\` repeats the code of \`${seen.get(code)}\`.`, location: where.key() });
          seen.set(code, name);
        }
      },
    },
  };
}

/**
 * A schema with a `pattern` says in words what it accepts (its own description, its parameter's, or, for the
 * `not: { pattern }` of a portable "only these characters" rule, its parent's): the reference leaves regular
 * expressions out (scripts/build-docs.mjs), so the sentence is what readers get.
 */
function PatternDescription() {
  const described = new WeakSet();
  return {
    Parameter(parameter, ctx) {
      const schema = resolved(parameter.schema, ctx);
      if (schema && typeof parameter.description === 'string') described.add(schema);
    },
    Schema(schema, ctx) {
      const inWords = typeof schema.description === 'string' || described.has(schema);
      if (inWords && typeof schema.not === 'object' && schema.not !== null) described.add(resolved(schema.not, ctx));
      if (typeof schema.pattern !== 'string' || inWords) return;
      ctx.report({
        message: 'A schema with a `pattern` needs a `description` that says in words what it accepts.',
        location: ctx.location.child(['pattern']).key(),
      });
    },
  };
}

/** Creations and lists declare the OpenAPI `links` that chain them to what takes their ids (operation-links.mjs). */
function OperationLinks() {
  return {
    Root: {
      enter(root, ctx) {
        for (const { message, at } of linkProblems(root)) ctx.report({ message, location: ctx.location.child(at) });
      },
    },
  };
}

export default function worksApiPlugin() {
  return {
    id: 'works-api',
    rules: {
      oas3: {
        'problem-responses': ProblemResponses,
        'no-store-responses': NoStoreResponses,
        'problem-types': ProblemTypes,
        'pattern-description': PatternDescription,
        'schema-example': SchemaExample,
        'parameter-example': ParameterExample,
        'bounded-values': BoundedValues,
        'object-direction': ObjectDirection,
        'operation-security': OperationSecurity,
        'operation-scope': OperationScope,
        'operation-links': OperationLinks,
      },
    },
  };
}
