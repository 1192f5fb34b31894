// Which OpenAPI `links` the contract must declare, and whether the ones it declares resolve: the rule
// works-api/operation-links (plugins/works-api.mjs) reports both, so a new creation or list gets its links
// before it lands, and tools that chain calls (the stateful mode of the server's spec-fuzz test, partners'
// fuzzers) can follow them.
//
// - A creation (a `201` of an API-key operation at a collection path P) links every operation under P/{new id}
//   that needs no other id than those of its own path and the new one (tenant → get, update, members, works,
//   webhook endpoints; work → get, ..., its requests; request → get, events, the four actions; ...).
// - A list (a `200` whose one property is a `…Connection`) links `nextPage` (itself, `after` = its `endCursor`)
//   and, when there is a `GET P/{id}`, that read for the first item of the page: a runtime expression can name
//   one item (`edges/0`), not each.

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const pathParams = (path) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);

function resolve(root, node) {
  let at = node;
  while (at && typeof at.$ref === 'string')
    at = at.$ref
      .slice(2)
      .split('/')
      .reduce((into, key) => into?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
  return at;
}

/** Every operation of the contract, with what the rules need. */
export function operationsOf(root) {
  return Object.entries(root.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const operation = item[method];
      const security = operation.security ?? root.security ?? [];
      return {
        path,
        method,
        operation,
        operationId: operation.operationId,
        params: pathParams(path),
        operator: security.some((requirement) => 'adminToken' in requirement),
      };
    }),
  );
}

/** The schema a JSON pointer reaches inside `schema` (through $ref, allOf, properties and array items), if any. */
export function schemaAt(root, schema, pointer) {
  let at = resolve(root, schema);
  for (const key of pointer.split('/').filter(Boolean)) {
    if (!at) return undefined;
    const candidates = [at, ...(at.allOf ?? []).map((member) => resolve(root, member))];
    const next = /^\d+$/.test(key)
      ? candidates.map((c) => c.items).find(Boolean)
      : candidates.map((c) => c.properties?.[key]).find(Boolean);
    at = resolve(root, next);
  }
  return at;
}

const jsonBody = (root, response) => resolve(root, response)?.content?.['application/json']?.schema;

/** The links each operation's success responses must have: `${operationId} ${status}` → target operationIds. */
export function expectedLinks(root) {
  const operations = operationsOf(root);
  const expected = new Map();
  for (const creation of operations) {
    if (creation.operator || !creation.operation.responses?.['201']) continue;
    const below = operations.filter((o) => !o.operator && o.path.startsWith(`${creation.path}/{`));
    if (below.length === 0) continue;
    const newId = /^\{([^}]+)\}/.exec(below[0].path.slice(creation.path.length + 1))[1];
    const known = new Set([...creation.params, newId]);
    const targets = below.filter(
      (o) => o.path.startsWith(`${creation.path}/{${newId}}`) && o.params.every((p) => known.has(p)),
    );
    expected.set(
      `${creation.operationId} 201`,
      targets.map((o) => o.operationId),
    );
  }
  for (const list of operations) {
    if (list.method !== 'get' || !list.operation.responses?.['200']) continue;
    const properties = resolve(root, jsonBody(root, list.operation.responses['200']))?.properties ?? {};
    const [only, ...others] = Object.values(properties);
    if (!only || others.length > 0 || !/Connection$/.test(only.$ref ?? '')) continue;
    const item = operations.find(
      (o) => o.method === 'get' && new RegExp(`^${list.path.replace(/[{}]/g, '\\$&')}/\\{[^}/]+\\}$`).test(o.path),
    );
    expected.set(`${list.operationId} 200`, [...(item ? [item.operationId] : []), list.operationId]);
  }
  return expected;
}

/** What is wrong with the links of `root`: [{ message, at: path segments from the root }]. */
export function linkProblems(root) {
  const operations = operationsOf(root);
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  const problems = [];
  for (const source of operations) {
    for (const [status, response] of Object.entries(source.operation.responses ?? {})) {
      const links = resolve(root, response)?.links ?? {};
      const at = ['paths', source.path, source.method, 'responses', status, 'links'];
      for (const [name, link] of Object.entries(links)) {
        const target = byId.get(link.operationId);
        if (!target) {
          problems.push({
            message: `Link \`${name}\` names no operation (\`${link.operationId}\`).`,
            at: [...at, name],
          });
          continue;
        }
        const given = Object.keys(link.parameters ?? {}).map((key) => key.replace(/^(path|query)\./, ''));
        for (const param of target.params.filter((p) => !given.includes(p)))
          problems.push({
            message: `Link \`${name}\` does not give \`${param}\` to \`${target.operationId}\`.`,
            at: [...at, name],
          });
        for (const [key, expression] of Object.entries(link.parameters ?? {})) {
          const fromPath = /^\$request\.path\.(.+)$/.exec(expression);
          const fromBody = /^\$response\.body#(\/.*)$/.exec(expression);
          if (fromPath && !source.params.includes(fromPath[1]))
            problems.push({
              message: `Link \`${name}\`: \`${expression}\` is not a path parameter here.`,
              at: [...at, name, 'parameters', key],
            });
          else if (fromBody && !schemaAt(root, jsonBody(root, response), fromBody[1]))
            problems.push({
              message: `Link \`${name}\`: \`${expression}\` is not in the response body.`,
              at: [...at, name, 'parameters', key],
            });
          else if (!fromPath && !fromBody)
            problems.push({
              message: `Link \`${name}\`: use \`$request.path.…\` or \`$response.body#/…\`.`,
              at: [...at, name, 'parameters', key],
            });
        }
      }
    }
  }
  for (const [key, targets] of expectedLinks(root)) {
    const [operationId, status] = key.split(' ');
    const source = byId.get(operationId);
    const links = resolve(root, source.operation.responses[status])?.links ?? {};
    const linked = new Set(Object.values(links).map((link) => link.operationId));
    for (const target of targets.filter((t) => !linked.has(t)))
      problems.push({
        message: `\`${operationId}\` ${status} must link \`${target}\`${target === operationId ? ' (nextPage)' : ''}: it takes the id this response hands out.`,
        at: ['paths', source.path, source.method, 'responses', status],
      });
  }
  return problems;
}
