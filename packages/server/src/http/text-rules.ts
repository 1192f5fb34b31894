import type { RequestHandler } from 'express';
import { isTextSchema, type TextSchema, textViolation } from '../domain/text';
import { aboutField } from '../domain/validation-messages';
import { sendProblem } from './problems';
import { resolveRef, type Spec, type SpecOperation } from './spec';

type Node = Record<string, unknown>;

/** A body field that refers to one of the text schemas: where it is, and which. */
interface TextField {
  at: string[];
  schema: TextSchema;
}

/** The fields of `schema` (a request body's) that refer to a text schema, following `$ref`, `allOf` and properties. */
function textFields(document: Node, schema: unknown, at: string[] = []): TextField[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Node;
  if (typeof node.$ref === 'string') {
    const name = node.$ref.split('/').at(-1)!;
    if (node.$ref.startsWith('#/components/schemas/') && isTextSchema(name)) return [{ at, schema: name }];
    return textFields(document, resolveRef(document, node.$ref), at);
  }
  const members = ['allOf', 'oneOf', 'anyOf'].flatMap((key) =>
    Array.isArray(node[key]) ? (node[key] as unknown[]) : [],
  );
  return [
    ...members.flatMap((member) => textFields(document, member, at)),
    ...Object.entries((node.properties ?? {}) as Node).flatMap(([key, value]) =>
      textFields(document, value, [...at, key]),
    ),
  ];
}

function bodySchemaOf(spec: Spec, operation: SpecOperation): unknown {
  const item = (spec.document.paths as Record<string, Record<string, Node>>)[operation.path]!;
  let body = item[operation.method]!.requestBody as Node | undefined;
  if (typeof body?.$ref === 'string') body = resolveRef(spec.document, body.$ref) as Node;
  return (body?.content as Record<string, Node> | undefined)?.['application/json']?.schema;
}

/**
 * What the validator cannot check of an operation's text fields (domain/text.ts): a 400 `validation_failed` with
 * an error per field, as the validator's own. Undefined when the operation's body has no text field.
 */
export function textRulesFor(spec: Spec, operation: SpecOperation): RequestHandler | undefined {
  const fields = operation.takes.body ? textFields(spec.document, bodySchemaOf(spec, operation)) : [];
  if (fields.length === 0) return undefined;
  return (req, res, next) => {
    const errors = fields.flatMap(({ at, schema }) => {
      const value = at.reduce<unknown>(
        (into, key) => (typeof into === 'object' && into !== null ? (into as Node)[key] : undefined),
        req.body,
      );
      const rule = typeof value === 'string' ? textViolation(schema, value) : undefined;
      const path = `/body/${at.join('/')}`;
      return rule ? [{ path, message: aboutField(path, rule) }] : [];
    });
    if (errors.length === 0) return next();
    sendProblem(
      res,
      'validation_failed',
      'The request does not match the API contract.',
      req.originalUrl.split('?')[0]!,
      {
        errors,
      },
    );
  };
}
