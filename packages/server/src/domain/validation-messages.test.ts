import { loadSpec, resolveRef } from '../http/spec';
import { ruleMessages, schemaRules } from './validation-messages';

/** The table and the contract say the same rules in the same words. */
const { document } = loadSpec();
type Node = Record<string, unknown>;
const components = document.components as Record<string, Record<string, Node>>;
/** A named schema, or a named parameter's schema (with the parameter's description). */
const named = (name: string): Node | undefined => {
  if (components.schemas![name]) return components.schemas![name];
  const parameter = components.parameters![name];
  return parameter && { ...(parameter.schema as Node), description: parameter.description };
};

/** The names of the schemas and parameters a request can reach (its body and its parameters). */
function inputNames(): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as Node).$ref;
    if (typeof ref === 'string') {
      const name = ref.split('/').at(-1)!;
      if (names.has(name)) return;
      names.add(name);
      return walk(resolveRef(document, ref));
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'responses') walk(value);
  };
  for (const item of Object.values(document.paths as Record<string, Node>))
    for (const [method, operation] of Object.entries(item))
      if (method === 'parameters') walk(operation);
      else walk({ parameters: (operation as Node).parameters, requestBody: (operation as Node).requestBody });
  return names;
}

describe('the table of validation messages and the contract', () => {
  it('has an entry for every pattern a request can meet', () => {
    const withPattern = [...inputNames()].filter((name) => typeof named(name)?.pattern === 'string');
    expect(withPattern.sort()).toEqual(
      [
        'Answer',
        'EventTypeList',
        'Id',
        'IdInPath',
        'IdempotencyKey',
        'LongText',
        'Name',
        'PersonName',
        'RequestStatusList',
        'WebhookEndpointDescription',
      ].sort(),
    );
    for (const name of withPattern) expect(schemaRules[name]?.pattern).toBeDefined();
  });

  it.each(Object.keys(schemaRules))(
    '%s: x-pattern-message is the table’s words, and the description states every rule',
    (name) => {
      const schema = named(name);
      const rules = schemaRules[name]!;
      expect(schema).toBeDefined();
      if (typeof schema!.pattern === 'string') expect(schema!['x-pattern-message']).toBe(rules.pattern);
      const description = String(schema!.description).replace(/\s+/g, ' ');
      const stated = [rules.minLength, rules.maxLength, rules.format, ...(rules.pattern?.split(', and ') ?? [])];
      for (const rule of stated.filter((rule): rule is string => rule !== undefined))
        expect(description).toContain(rule.replace(/^(must be 1 to \d+) .*/, '$1'));
      if (['Name', 'PersonName', 'LongText', 'WebhookEndpointDescription'].includes(name))
        expect(description).toMatch(/unpaired surrogate/);
    },
  );

  it('words the date rule as the contract does', () => {
    expect(String(named('DateTimeInput')!.description).replace(/\s+/g, ' ')).toContain(ruleMessages.realDateTime);
  });
});
