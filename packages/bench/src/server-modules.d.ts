// The few pure functions of the server that the baseline reuses (the server's build emits no declarations),
// so that both sides spend the same CPU on slugs, ids and the state machine.
declare module '@works-api/server/dist/domain/slug' {
  export function slugify(name: string, fallback: string): string;
  export function numberedSlug(base: string, n: number): string;
}

declare module '@works-api/server/dist/domain/search/fold' {
  export function workSearchText(work: { name: string; slug: string; description: string }): string;
  export function requestSearchText(request: {
    title: string;
    message: string;
    recipientEmail: string;
    recipientFirstName: string;
    recipientLastName: string;
  }): string;
}

declare module '@works-api/server/dist/db/pglite-extensions' {
  export const PGLITE_EXTENSIONS: Record<string, unknown>;
}

declare module '@works-api/server/dist/db/ids' {
  export function newId(): string;
}

declare module '@works-api/server/dist/domain/requests/state-machine' {
  export type RequestStatus = 'pending' | 'confirmed' | 'validated' | 'cancelled';
  export type RequestAction = 'confirm' | 'validate' | 'early_validate' | 'cancel';
  export type Decision =
    | { kind: 'apply'; from: readonly RequestStatus[]; to: RequestStatus }
    | { kind: 'repeat' }
    | { kind: 'conflict'; currentStatus: RequestStatus; allowedActions: RequestAction[] };
  export function decide(action: RequestAction, state: { status: RequestStatus; validation: string | null }): Decision;
  /** What each action writes besides its status (the server's table; the baseline derives its UPDATE from it). */
  export const requestActions: Record<
    RequestAction,
    { stamp: string; validation?: 'standard' | 'early'; note?: 'answer' | 'cancelReason' }
  >;
}

// The scale mode (scale.ts) loads the server's large data set with the server's own loader and migrations.
declare module '@works-api/server/dist/db/migrate' {
  export interface SqlSession {
    exec(sql: string): Promise<void>;
    query<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  }
  export function applyMigrations(session: SqlSession): Promise<string[]>;
  export function pgliteSession(pglite: import('@electric-sql/pglite').PGlite): SqlSession;
  export function withPgSession<T>(url: string, work: (session: SqlSession) => Promise<T>): Promise<T>;
}

declare module '@works-api/server/dist/db/large-dataset' {
  import type { SqlSession } from '@works-api/server/dist/db/migrate';
  export type LargeDatasetShapeName = 'production' | 'pglite' | 'small';
  export interface LargeDatasetShape {
    heavyUserTenants: number;
    popularNameTenants: number;
    otherTenants: number;
    otherUsers: number;
    bigTenantMembers: number;
    bigTenantWorks: number;
    bigWorkRequests: number;
    revokedApiKeys: number;
    expiredIdempotencyKeys: number;
    webhookHistory: number;
  }
  export const LARGE_DATASET_SHAPES: Record<LargeDatasetShapeName, LargeDatasetShape>;
  export interface LargeDataset {
    shape: LargeDatasetShape;
    heavyUser: { id: string; email: string; apiKeyId: string; apiKey: string };
    bigTenantId: string;
    bigWorkId: string;
    popularName: string;
    popularSlug: string;
    timings: Array<{ step: string; ms: number }>;
  }
  export function loadLargeDataset(
    session: SqlSession,
    shape: LargeDatasetShape,
    options?: { namespace?: string; at?: Date },
  ): Promise<LargeDataset>;
  export function nthNewestRequestId(
    session: SqlSession,
    workId: string,
    position: number,
    status?: 'pending' | 'confirmed' | 'validated' | 'cancelled',
  ): Promise<string>;
}

declare module '@works-api/server/dist/db/secret-box' {
  export function parseEncryptionKeys(value: string): Buffer[];
  export class SecretBox {
    constructor(keys: Buffer[]);
    derivedKeys(purpose: 'cursor'): Buffer[];
  }
}

declare module '@works-api/server/dist/domain/cursors' {
  export class Cursors {
    constructor(keys: readonly Buffer[]);
  }
}

declare module '@works-api/server/dist/http/spec' {
  export interface Spec {
    basePath: string;
  }
  export function loadSpec(file?: string): Spec;
}

declare module '@works-api/server/dist/http/cursors' {
  import type { Cursors } from '@works-api/server/dist/domain/cursors';
  import type { Spec } from '@works-api/server/dist/http/spec';
  export class CursorEdge {
    constructor(spec: Spec, cursors: Cursors);
    cursorOf(list: { operationId: string; path: Record<string, string> }, id: string): string;
  }
}
