import type { Request } from 'express';
import { operationMatcher, type Spec, type SpecOperation } from './spec';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /**
       * The contract's operation this request is for, by method and path, or undefined when none is (unknown
       * routes, other methods, paths outside the contract). Set once, first thing (`identifyOperation`): the body
       * parser, the validation messages, the problem check, the route template and the metrics read it.
       */
      operation?: SpecOperation;
    }
  }
}

/** Finds the request's operation once, at the edge, for everything after it to read. */
export function operationIdentifier(spec: Spec): (req: Request) => void {
  const operationFor = operationMatcher(spec);
  return (req) => {
    req.operation = operationFor(req.method, req.originalUrl.split('?')[0]!);
  };
}
