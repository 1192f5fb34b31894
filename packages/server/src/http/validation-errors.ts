import type { ErrorRequestHandler, Request } from 'express';
import { batchFindings, invalidBatch, mergeBatchFindings } from '../domain/requests/batches';
import { aboutField, boundMessages, fieldName, ruleMessages, schemaRules } from '../domain/validation-messages';
import { resolveRef, type Spec } from './spec';

type Node = Record<string, unknown>;

/** One finding of express-openapi-validator: Ajv's keyword (`<keyword>.openapi.validation`) and a pointer. */
interface ValidatorFinding {
  path?: string;
  message?: string;
  errorCode?: string;
}

/** A field's schema as the contract writes it: its keywords (merged through `$ref` and `allOf`) and its names. */
interface FieldSchema {
  keywords: Node;
  /** The named schemas (and parameter) it goes through, outermost first: `schemaRules` is keyed by these. */
  names: string[];
}

const FORMAT_RULES: Record<string, string> = {
  'date-time': ruleMessages.realDateTime,
  email: ruleMessages.email,
  uri: ruleMessages.url,
};

/**
 * Rewrites the validator's findings into the words of domain/validation-messages.ts, naming the field
 * (`name must not be blank`, `unknown property "colour"`), before problems.ts turns them into a 400. The rule
 * comes from Ajv's keyword and the field's schema in the contract (a named schema's own words first); the value
 * sent decides between two rules one pattern holds.
 */
export function validationMessages(spec: Spec): ErrorRequestHandler {
  return (error: unknown, req, _res, next) => {
    const findings = (error as { status?: number; errors?: ValidatorFinding[] }).errors;
    if ((error as { status?: number }).status !== 400 || !Array.isArray(findings)) return next(error);
    const { operation } = req;
    const document = spec.document;
    const operationObject = operation
      ? ((document.paths as Record<string, Record<string, Node>>)[operation.path]?.[operation.method] as Node)
      : undefined;
    const pathItem = operation ? (document.paths as Record<string, Node>)[operation.path] : undefined;
    for (const finding of findings) {
      const path = pointerOf(finding.path ?? '');
      finding.path = path;
      finding.message = inWords(finding, path, req, (where) =>
        operationObject ? fieldSchema(document, pathItem!, operationObject, where) : undefined,
      );
    }
    next(error);
  };
}

/** The validator's pointer, with `params` (Express's name) as the contract's `path`. */
const pointerOf = (path: string) => path.replace(/^\/params\//, '/path/');

function inWords(
  finding: ValidatorFinding,
  path: string,
  req: Request,
  schemaAt: (path: string) => FieldSchema | undefined,
): string {
  const keyword = finding.errorCode?.replace(/\.openapi\.validation$/, '');
  const last = path.split('/').at(-1) ?? '';
  if (!keyword) {
    // The validator's own checks of the query string carry no Ajv keyword.
    if (/^Unknown query parameter/.test(finding.message ?? '')) return boundMessages.unknownParameter(last);
    if (/^Empty value found/.test(finding.message ?? '')) return aboutField(path, ruleMessages.notEmpty);
    return aboutField(path, finding.message ?? 'is not valid');
  }
  if (keyword === 'additionalProperties' || keyword === 'unevaluatedProperties')
    return boundMessages.unknownProperty(last);
  const field = schemaAt(path);
  const keywords = field?.keywords ?? {};
  const rules = Object.assign({}, ...(field?.names ?? []).map((name) => schemaRules[name] ?? {})) as
    (typeof schemaRules)[string] | Record<string, never>;
  const named = displayName(path, field);
  const about = (rule: string) => `${named} ${rule}`;
  const value = valueAt(req, path);
  switch (keyword) {
    case 'required':
      return about(ruleMessages.required);
    case 'type': {
      const types = Array.isArray(keywords.type)
        ? (keywords.type as string[])
        : [typeof keywords.type === 'string' ? keywords.type : 'string'];
      return about(boundMessages.type(types));
    }
    case 'minLength':
      return about(
        rules.minLength ??
          (keywords.minLength === 1
            ? ruleMessages.notEmpty
            : boundMessages.atLeastCharacters(Number(keywords.minLength))),
      );
    case 'maxLength':
      return about(rules.maxLength ?? boundMessages.atMostCharacters(Number(keywords.maxLength)));
    case 'pattern':
      return about(
        (typeof value === 'string' && rules.patternFor?.(value)) ||
          rules.pattern ||
          (typeof keywords['x-pattern-message'] === 'string' ? keywords['x-pattern-message'] : 'is not valid'),
      );
    case 'format':
      return about(
        rules.format ?? FORMAT_RULES[String(keywords.format)] ?? `must be a valid ${String(keywords.format)}`,
      );
    case 'enum':
      return about(boundMessages.oneOf(((keywords.enum as unknown[]) ?? []).filter((option) => option !== null)));
    case 'const':
      return about(boundMessages.constant(keywords.const));
    case 'minimum':
      return about(boundMessages.atLeast(Number(keywords.minimum)));
    case 'maximum':
      return about(boundMessages.atMost(Number(keywords.maximum)));
    case 'maxItems':
      return about(boundMessages.atMostItems(Number(keywords.maxItems)));
    case 'uniqueItems':
      return about(ruleMessages.uniqueItems);
    case 'minProperties':
      return about(ruleMessages.someProperty);
    case 'maxProperties':
      return about(ruleMessages.noProperty);
    default:
      return about(finding.message ?? 'is not valid');
  }
}

/** The field as a person names it; a header by the name the contract gives it (`Idempotency-Key`). */
function displayName(path: string, field: FieldSchema | undefined): string {
  const declared = field?.keywords['x-parameter-name'];
  if (path.startsWith('/headers/') && typeof declared === 'string') return declared;
  return fieldName(path);
}

/** The value sent at `path` (`/body/recipient/email`, `/query/limit`, `/path/tenant_id`, `/headers/x`). */
function valueAt(req: Request, path: string): unknown {
  const [, part, ...rest] = path.split('/');
  const root: unknown =
    part === 'body'
      ? (req.body as unknown)
      : part === 'query'
        ? req.query
        : part === 'path'
          ? req.params
          : part === 'headers'
            ? req.headers
            : undefined;
  return rest.reduce<unknown>(
    (node, key) => (typeof node === 'object' && node !== null ? (node as Node)[key] : undefined),
    root,
  );
}

const nameOfRef = (ref: string) => ref.split('/').at(-1)!;

/** Follows `$ref` and `allOf` from `node`, merging keywords (outer ones win) and collecting schema names. */
function flatten(document: Node, node: unknown, into: FieldSchema = { keywords: {}, names: [] }): FieldSchema {
  if (typeof node !== 'object' || node === null) return into;
  const schema = node as Node;
  if (typeof schema.$ref === 'string') {
    into.names.push(nameOfRef(schema.$ref));
    return flatten(document, resolveRef(document, schema.$ref), into);
  }
  for (const [key, value] of Object.entries(schema))
    if (key !== 'allOf' && !(key in into.keywords)) into.keywords[key] = value;
  for (const member of (schema.allOf as unknown[] | undefined) ?? []) flatten(document, member, into);
  return into;
}

/** The schema of the property `key` of an object schema (looking through `$ref` and `allOf`), or of an item. */
function childOf(document: Node, node: unknown, key: string): unknown {
  const flat = flatten(document, node);
  if (/^\d+$/.test(key) && flat.keywords.items) return flat.keywords.items;
  const properties = flat.keywords.properties as Node | undefined;
  if (properties && key in properties) return properties[key];
  for (const member of [(node as Node | undefined)?.allOf].flat()) {
    const found = member && childOf(document, member, key);
    if (found) return found;
  }
  return undefined;
}

/** The schema the contract gives the field at `path` of an operation. */
function fieldSchema(document: Node, pathItem: Node, operation: Node, path: string): FieldSchema | undefined {
  const [, part, ...rest] = path.split('/');
  if (part === 'body') {
    let body = operation.requestBody as Node | undefined;
    if (typeof body?.$ref === 'string') body = resolveRef(document, body.$ref) as Node;
    let node: unknown = (body?.content as Record<string, Node> | undefined)?.['application/json']?.schema;
    for (const key of rest) node = node === undefined ? undefined : childOf(document, node, key);
    return node === undefined ? undefined : flatten(document, node);
  }
  const where = part === 'path' ? 'path' : part === 'query' ? 'query' : part === 'headers' ? 'header' : undefined;
  const parameters = [...((pathItem.parameters as Node[]) ?? []), ...((operation.parameters as Node[]) ?? [])];
  for (const entry of parameters) {
    const name = typeof entry.$ref === 'string' ? nameOfRef(entry.$ref) : undefined;
    const parameter = (name ? resolveRef(document, entry.$ref as string) : entry) as Node;
    const same =
      parameter.in === where &&
      (where === 'header'
        ? String(parameter.name).toLowerCase() === rest[0]?.toLowerCase()
        : parameter.name === rest[0]);
    if (!same) continue;
    const field = flatten(document, parameter.schema);
    if (name) field.names.unshift(name);
    field.keywords['x-parameter-name'] = parameter.name;
    return field;
  }
  return undefined;
}

/**
 * A batch refused by the validator (createRequestBatch): its findings, completed with the server's own rules on
 * every item (a missing title, a due date in the past, ...), each path once in item order, so that one 400 names
 * every bad item.
 */
export function batchFindingsWithValidators(): ErrorRequestHandler {
  return (error: unknown, req, _res, next) => {
    const refused = error as { status?: number; errors?: Array<{ path?: string; message?: string }> };
    if (req.operation?.operationId !== 'createRequestBatch' || refused.status !== 400 || !Array.isArray(refused.errors))
      return next(error);
    const found = refused.errors.map((finding) => ({ path: finding.path ?? '', message: finding.message ?? '' }));
    // Our own problem from here on: the last error handler lists a validator's findings up to the usual 100.
    next(invalidBatch(mergeBatchFindings(found, batchFindings(req.body, new Date()))));
  };
}
