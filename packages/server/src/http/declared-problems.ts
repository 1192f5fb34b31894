import type { Request } from 'express';
import { resolveRef, type Spec } from './spec';

/** What a problem body must be to match one problem type the spec declares. */
export interface ProblemType {
  /** The schema's name, e.g. `NotFoundProblem`. */
  name: string;
  code: string;
  status: number;
  /** Every property the type requires (the Problem schema's and its own). */
  required: string[];
}

type Node = Record<string, unknown>;

/**
 * The problem types of openapi/api.yaml: the named schemas that are `allOf` the Problem schema with a `const`
 * code and status (the lint rule `works-api/problem-types` keeps them that way).
 */
export function problemTypes(spec: Spec): Map<string, ProblemType> {
  const schemas = ((spec.document.components as Node | undefined)?.schemas ?? {}) as Record<string, Node>;
  const types = new Map<string, ProblemType>();
  for (const [name, schema] of Object.entries(schemas)) {
    const members = (schema.allOf ?? []) as Node[];
    if (!members.some((member) => member.$ref === '#/components/schemas/Problem')) continue;
    const resolved = members.map((member) =>
      typeof member.$ref === 'string' ? (resolveRef(spec.document, member.$ref) as Node) : member,
    );
    const constOf = (property: string) =>
      resolved
        .map((member) => ((member.properties as Record<string, Node> | undefined)?.[property] ?? {}).const)
        .find((v) => v !== undefined);
    const code = constOf('code');
    const status = constOf('status');
    if (typeof code !== 'string' || typeof status !== 'number') continue;
    const required = [...new Set(resolved.flatMap((member) => (member.required ?? []) as string[]))];
    types.set(`#/components/schemas/${name}`, { name, code, status, required });
  }
  return types;
}

/** For every operation, the problem types each of its error statuses can carry. */
export function declaredProblems(spec: Spec): Map<string, Map<number, ProblemType[]>> {
  const types = problemTypes(spec);
  const paths = spec.document.paths as Record<string, Record<string, Node>>;
  const declared = new Map<string, Map<number, ProblemType[]>>();
  for (const operation of spec.operations) {
    const responses = (paths[operation.path]![operation.method]!.responses ?? {}) as Record<string, Node>;
    const byStatus = new Map<number, ProblemType[]>();
    for (const [status, reference] of Object.entries(responses)) {
      const response =
        typeof reference.$ref === 'string' ? (resolveRef(spec.document, reference.$ref) as Node) : reference;
      const schema = ((response.content as Record<string, Node> | undefined)?.['application/problem+json']?.schema ??
        {}) as Node;
      const alternatives = (schema.oneOf ?? [schema]) as Node[];
      const problems = alternatives
        .map((alternative) => types.get(String(alternative.$ref)))
        .filter((type) => type !== undefined);
      if (problems.length > 0) byStatus.set(Number(status), problems);
    }
    declared.set(operation.operationId, byStatus);
  }
  return declared;
}

/**
 * A check of every problem the app answers to an operation of the contract: its status must be one the operation
 * declares, its `code` one of that response's problem types, and the type's required properties present. The
 * response validator does not see problem bodies (they are sent as text, also before validation runs: 401, 429,
 * malformed JSON), so the app runs this instead when it validates responses (in tests). Returns what is wrong,
 * or undefined.
 */
export function declaredProblemCheck(
  spec: Spec,
): (req: Request, body: { status: number; code: string }) => string | undefined {
  const declared = declaredProblems(spec);
  return (req, body) => {
    const { operation } = req;
    if (!operation) return undefined;
    const types = declared.get(operation.operationId)?.get(body.status);
    const type = types?.find((candidate) => candidate.code === body.code);
    const name = `${operation.operationId} answered ${body.status} ${body.code}`;
    if (!types) return `${name}, but openapi/api.yaml declares no ${body.status} problem for it`;
    if (!type) return `${name}, but its ${body.status} response declares only ${types.map((t) => t.code).join(', ')}`;
    const missing = type.required.filter((property) => !(property in body));
    if (missing.length > 0) return `${name} without ${missing.join(', ')}, which ${type.name} requires`;
    return undefined;
  };
}
