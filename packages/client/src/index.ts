export type { components, operations, paths } from '@works-api/api-types';
export type { Middleware } from 'openapi-fetch';
export {
  type ClientOptions,
  createClient,
  type OperationId,
  type OperationMethods,
  type OperationResult,
  type WorksApiClient,
} from './client';
export { operationRoutes } from './operations';
export { isProblem, type Problem, ProblemError, unwrap } from './problem';
export { isRetryable, parseRetryAfter, type RetryOptions } from './retry';
