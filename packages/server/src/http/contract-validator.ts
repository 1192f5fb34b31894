import { type RequestHandler, Router } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { isRealDateTime } from '../domain/dates';
import { closedDocument, type Spec } from './spec';

/**
 * Every request checked against the contract (and, in tests, every response, against the contract closed:
 * exactly the documented properties). A batch's 400 names every bad item (issue 41), so its validator collects
 * every finding (its body is bounded: 1,000 items, 2 MiB); every other operation stops at the first, as Ajv
 * advises for input from anyone.
 *
 * Building one costs about half a second of CPU (the document checked against OpenAPI's own schema, then
 * dereferenced and preprocessed): each is built once per contract document and setting, and the document is
 * checked once, by the first. A process that builds several apps on one contract (a test file's servers) pays once.
 */
export function contractValidator(spec: Spec, validateResponses: boolean): RequestHandler {
  const built = validators.get(spec.document) ?? new Map<boolean, RequestHandler>();
  validators.set(spec.document, built);
  const cached = built.get(validateResponses);
  if (cached) return cached;
  const checkDocument = built.size === 0;
  const validator = (allErrors: boolean, validateApiSpec: boolean) =>
    Router().use(
      OpenApiValidator.middleware({
        apiSpec: (validateResponses ? closedDocument(spec.document) : structuredClone(spec.document)) as never,
        validateApiSpec,
        validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors },
        validateResponses,
        validateSecurity: false,
        // No operation takes multipart bodies: no multer, and no Ajv of its own (a multipart body is a 415 like any
        // other undocumented media type).
        fileUploader: false,
        validateFormats: true,
        // `date-time` as the domain reads it (domain/dates.ts): a real date and time, never moved; not Ajv's regex.
        formats: { 'date-time': isRealDateTime },
        $refParser: { mode: 'dereference' },
      }),
    );
  const firstFinding = validator(false, checkDocument);
  // Built on the first batch, not with the app: most processes (and test files) never send one, and each validator
  // costs its half second of CPU and its memory.
  let everyFinding: RequestHandler | undefined;
  const handler: RequestHandler = (req, res, next) => {
    if (req.operation?.operationId !== 'createRequestBatch') return firstFinding(req, res, next);
    everyFinding ??= validator(true, false);
    return everyFinding(req, res, next);
  };
  built.set(validateResponses, handler);
  return handler;
}

const validators = new WeakMap<object, Map<boolean, RequestHandler>>();
