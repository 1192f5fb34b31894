/**
 * Every statement the server and the bench send, one module per resource. A module exports typed functions named
 * for what they do (`insertRequest(db, params)`), each with its SQL text next to its parameter and row types, and
 * sends it with `sendStatement` (send.ts), the one way a statement is sent.
 */
export * from './driver';
export * from './idempotency';
export * from './named-parameters';
export * from './send';
export * from './slugs';
export * from './mail';
export * from './mail-recipients';
export * from './webhooks';
export * from './parts';
export * from './requests';
export * from './api-keys';
export * from './request-batches';
export * from './sessions';
export * from './sign-in';
export * from './pages';
export * from './health';
export * from './users';
export * from './access';
export * from './limits';
export * from './recipients';
export * from './search';
export * from './metrics';
export * from './members';
export * from './invitations';
export type { CappedListWindow, CappedPage } from './capped-lists';
export * from './events';
export * from './works';
export * from './request-reads';
export * from './tenants';
export * from './webhook-endpoints';
export * from './transactions';
