export type { components, operations, paths } from '@works-api/api-types';
export type { Middleware } from 'openapi-fetch';
export {
  type ClientOptions,
  createClient,
  type OperationId,
  type OperationMethods,
  type OperationProblem,
  type OperationResult,
  type WorksApiClient,
} from './client';
export { allowedActionsByStatus, operationRoutes, requiredScopes, scopes } from './operations';
export type { ListNode, ListOperationId, Paginate, PaginateOptions } from './paginate';
export {
  type AnyProblem,
  type InsufficientScopeProblem,
  isInsufficientScope,
  isProblem,
  type Problem,
  type ProblemCode,
  ProblemError,
  type Scope,
  type UnexpectedResponseProblem,
  unwrap,
} from './problem';
export { isRetryable, parseRetryAfter, type RetryOptions } from './retry';
export {
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookVerificationReason,
  WebhookVerificationError,
} from './webhooks';
