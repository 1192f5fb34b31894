import type { operations } from '@works-api/api-types';
import type { Db } from '@works-api/prisma';
import type { HeldKey } from '@works-api/prisma';
import type { Actor } from '../domain/access';
import type { Limits } from '../domain/limits';
import type { WebhookSettings } from '../webhooks/endpoints';
import type { SessionPolicy } from '../domain/sessions/sessions';

/** What a handler may know and do of the browser behind a request (sessions: the cookie). */
export interface BrowserContext {
  /** The hash of the session cookie the request carried (valid or not): it ends at a new sign-in (rotation). */
  readonly presentedSessionHash: string | undefined;
  readonly userAgent: string | null;
  setSessionCookie(value: string, maxAgeSeconds: number): void;
  clearSessionCookie(): void;
}

/**
 * Handlers are typed by operationId from the generated types: their params, query and body are what the
 * contract says (and the validator has checked), and what they return must be one of the operation's
 * success responses.
 */
export type OperationId = keyof operations;
type Operation<K extends OperationId> = operations[K];

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Defined<T> = [T] extends [never] ? Record<string, never> : NonNullable<T>;

type PathOf<K extends OperationId> = Defined<Operation<K>['parameters']['path']>;
type QueryOf<K extends OperationId> = Defined<Operation<K>['parameters']['query']>;
type BodyOf<K extends OperationId> =
  Operation<K> extends { requestBody: infer Body }
    ? JsonOf<Body>
    : Operation<K> extends { requestBody?: infer Body }
      ? JsonOf<NonNullable<Body>> | undefined
      : never;

type SuccessStatus = 200 | 201 | 202 | 204;
type SuccessOf<K extends OperationId> = Extract<keyof Operation<K>['responses'], SuccessStatus>;

export type HandlerResult<K extends OperationId> = {
  [S in SuccessOf<K>]: S extends 204
    ? { status: S }
    : {
        status: S;
        body: JsonOf<Operation<K>['responses'][S]>;
        /** Where the created resource is, as the spec writes paths (`/tenants/…`): the base path is put before it. */
        location?: string;
      };
}[SuccessOf<K>];

/** Operations authenticated with the operator's ADMIN_TOKEN instead of an API key. */
export type AdminOperationId = 'adminCreateUser' | 'adminGetUser';
/** Operations authenticated with a recipient's answer token (the emailed link) instead of an API key. */
export type RecipientOperationId = 'getRecipientRequest' | 'answerRecipientRequest';
/** Operations that need no credential: signing in. */
export type PublicOperationId = 'createSignIn' | 'createSession';

export interface HandlerContext<K extends OperationId> {
  params: PathOf<K>;
  query: QueryOf<K>;
  body: BodyOf<K>;
  /** The caller (absent on operator and recipient routes, which no user calls). */
  actor: K extends AdminOperationId | RecipientOperationId | PublicOperationId ? null : Actor;
  /** The recipient's answer token, on recipient routes (checked against the stored hashes by the domain). */
  recipientToken: K extends RecipientOperationId ? string : undefined;
  db: Db;
  /** How webhook endpoint URLs are checked (WEBHOOK_ALLOW_PRIVATE_URLS), and how many a tenant may have. */
  webhooks: WebhookSettings;
  /** How much one user or tenant may hold (MAX_API_KEYS_PER_USER, ...). */
  limits: Limits;
  /**
   * The caller's `If-Match`, as a test of the resource's current representation (pass it to the domain, which
   * applies it atomically with the change). Undefined when the request has none or the operation takes none.
   */
  ifMatch?: (current: unknown) => boolean;
  /**
   * Only while the request holds an Idempotency-Key: the hold, which the creation guards its effect with and
   * records its result under, in the same statement or transaction (pass it to the domain).
   */
  heldKey?: HeldKey;
  /** Sessions and sign-in settings (SIGNUP, SESSION_*). */
  sessions: SessionPolicy;
  browser: BrowserContext;
}

export type Handler<K extends OperationId> = (context: HandlerContext<K>) => Promise<HandlerResult<K>>;

/**
 * A creating operation (one that takes an Idempotency-Key): `run` returns the domain's result, recorded with the
 * effect under the request's key; `respond` makes the answer from it, the first time and on every retry's replay,
 * so the two cannot differ.
 */
export interface Creation<K extends OperationId, Result> extends Handler<K> {
  respond(result: Result, params: PathOf<K>): HandlerResult<K>;
}

export function creation<K extends OperationId, Result>(
  run: (context: HandlerContext<K>) => Promise<Result>,
  respond: (result: Result, params: PathOf<K>) => HandlerResult<K>,
): Creation<K, Result> {
  return Object.assign(async (context: HandlerContext<K>) => respond(await run(context), context.params), {
    respond,
  });
}

/** One handler per operation of the contract: a missing operation fails to compile. */
export type HandlerMap = { [K in OperationId]: Handler<K> };
