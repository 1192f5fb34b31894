// What a load of the large data set takes and gives (the data set is described in large-dataset.ts): the shapes,
// the options, the LargeDataset a load returns, and the checks a shape must pass.

export interface LargeDatasetShape {
  /** Tenants the heavy user owns; its oldest is the big tenant. */
  heavyUserTenants: number;
  /** Tenants all named the popular name ("Acme"), owned by the other users. */
  popularNameTenants: number;
  /** More tenants, owned by the other users. */
  otherTenants: number;
  /** Users besides the heavy user (at least 1 when there are Acme or other tenants, at least `bigTenantMembers`). */
  otherUsers: number;
  /** Members of the big tenant besides its owner, taken from the other users. */
  bigTenantMembers: number;
  /** Works of the big tenant (at least 1: the newest is the big work). */
  bigTenantWorks: number;
  /** Requests of the big work. */
  bigWorkRequests: number;
  /** Revoked API keys of the heavy user. */
  revokedApiKeys: number;
  /** Idempotency keys past expiry (the janitor deletes them). */
  expiredIdempotencyKeys: number;
  /** Webhook events past the 30-day retention, each with one delivered delivery (the dispatcher deletes them). */
  webhookHistory: number;
}

export const LARGE_DATASET_SHAPES = {
  /** Production volumes: PostgreSQL, a couple of minutes to load. */
  production: {
    heavyUserTenants: 100_000,
    popularNameTenants: 20_000,
    otherTenants: 200_000,
    otherUsers: 20_000,
    bigTenantMembers: 100,
    bigTenantWorks: 200_000,
    bigWorkRequests: 1_000_000,
    revokedApiKeys: 1_000,
    expiredIdempotencyKeys: 300_000,
    webhookHistory: 300_000,
  },
  /** What embedded PGlite holds comfortably: about a tenth (100k requests in one work). */
  pglite: {
    heavyUserTenants: 10_000,
    popularNameTenants: 2_000,
    otherTenants: 20_000,
    otherUsers: 2_000,
    bigTenantMembers: 100,
    bigTenantWorks: 20_000,
    bigWorkRequests: 100_000,
    revokedApiKeys: 1_000,
    expiredIdempotencyKeys: 30_000,
    webhookHistory: 30_000,
  },
  /** For tests: tens of thousands of rows where a plan can depend on it, a few seconds on PGlite. */
  small: {
    heavyUserTenants: 2_000,
    popularNameTenants: 500,
    otherTenants: 2_000,
    otherUsers: 200,
    bigTenantMembers: 30,
    bigTenantWorks: 5_000,
    bigWorkRequests: 20_000,
    revokedApiKeys: 200,
    expiredIdempotencyKeys: 3_000,
    webhookHistory: 3_000,
  },
} as const satisfies Record<string, LargeDatasetShape>;

export type LargeDatasetShapeName = keyof typeof LARGE_DATASET_SHAPES;

export interface LoadLargeDatasetOptions {
  /**
   * Put into every email, name and slug (lower-case letters and digits, at most 20), so that several loads can
   * share one database, as tests on one PostgreSQL do: the popular name becomes "Acme <namespace>". Empty (the
   * default): the names in large-dataset.ts's table.
   */
  namespace?: string;
  /** Every row is older than this (default: now). */
  at?: Date;
}

export interface LargeDataset {
  shape: LargeDatasetShape;
  namespace: string;
  at: Date;
  heavyUser: { id: string; email: string; apiKeyId: string; apiKey: string };
  /** The heavy user's oldest tenant: `bigTenantWorks` works, `bigTenantMembers` + 1 members. */
  bigTenantId: string;
  /** The big tenant's newest work, with `bigWorkRequests` requests. */
  bigWorkId: string;
  /** The name `popularNameTenants` tenants share ("Acme"), and the slug the first of them has ("acme"). */
  popularName: string;
  popularSlug: string;
  /** The big tenant's disabled endpoint that the webhook history was delivered to. */
  webhookEndpointId: string;
  /** What was loaded, for assertions (computed from the shape, the same rules as the SQL). */
  counts: {
    users: number;
    tenants: number;
    heavyUserTenants: number;
    bigTenantMembers: number;
    bigTenantKeptWorks: number;
    bigTenantDiscardedWorks: number;
    bigWorkRequests: number;
    bigWorkByStatus: Record<'pending' | 'confirmed' | 'validated' | 'cancelled', number>;
    requestEvents: number;
    heavyUserApiKeys: number;
  };
  /** Milliseconds per step, for the benchmark's log. */
  timings: Array<{ step: string; ms: number }>;
}

export function checkShape(shape: LargeDatasetShape): void {
  for (const [field, value] of Object.entries(shape)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`shape.${field} must be a whole number`);
  }
  if (shape.heavyUserTenants < 1) throw new Error('shape.heavyUserTenants must be at least 1 (the big tenant)');
  if (shape.bigTenantWorks < 1) throw new Error('shape.bigTenantWorks must be at least 1 (the big work)');
  if (shape.otherUsers < shape.bigTenantMembers) throw new Error('shape.otherUsers must be at least bigTenantMembers');
  if (shape.otherUsers < 1 && shape.popularNameTenants + shape.otherTenants > 0)
    throw new Error('shape.otherUsers must be at least 1 to own the Acme and other tenants');
}
