/**
 * SQL parts that several statements are composed of: a write's webhook outbox row, the caller's membership as a
 * condition, a user as the owner of what a row shows. Statement modules put them together; nothing else should.
 */

/** One webhook outbox row as a statement writes it with the change that causes it (webhooks/events.ts builds it). */
export interface OutboxEventRow {
  id: string;
  tenantId: string;
  type: string;
  orderingKey: string | null;
  endpointId: string | null;
  body: string;
  createdAt: Date;
}

/** The columns of an outbox INSERT, for statements that write it together with the change. */
export const OUTBOX_COLUMNS = 'id, tenant_id, type, ordering_key, endpoint_id, body, created_at';

/**
 * The outbox row's values as named parameters, in `OUTBOX_COLUMNS`' order; `body` replaces the body's parameter
 * with an expression (choosing between bodies the statement alone can tell apart).
 */
export const outboxParamsWith = ({ body = ':outboxBody::text' }: { body?: string } = {}): string =>
  ':outboxId::uuid, :outboxTenantId::uuid, :outboxType::text, :outboxOrderingKey::uuid, :outboxEndpointId::uuid, ' +
  `${body}, :outboxCreatedAt::timestamptz`;

/** The outbox row's values as named parameters, in `OUTBOX_COLUMNS`' order. */
export const OUTBOX_PARAMS = outboxParamsWith();

/** The values of `OUTBOX_PARAMS`. */
export const outboxParams = (row: OutboxEventRow) => ({
  outboxId: row.id,
  outboxTenantId: row.tenantId,
  outboxType: row.type,
  outboxOrderingKey: row.orderingKey,
  outboxEndpointId: row.endpointId,
  outboxBody: row.body,
  outboxCreatedAt: row.createdAt.toISOString(),
});

/**
 * The caller's membership as a condition of a write (SQL over the tenant and user id parameters named): the write
 * goes through only for a member with one of `roles`, one round trip instead of two.
 */
export function memberMaySql(roles: readonly string[], tenantParam: string, userParam: string): string {
  return `EXISTS (SELECT 1 FROM memberships WHERE tenant_id = ${tenantParam}::uuid AND user_id = ${userParam}::uuid
          AND role IN (${roles.map((role) => `'${role}'`).join(', ')}))`;
}

/** A user's columns as the owner of a row (`alias` is the users table). */
export const ownerColumns = (alias: string): string =>
  `${alias}.email AS "ownerEmail", ${alias}.first_name AS "ownerFirstName", ${alias}.last_name AS "ownerLastName"`;

/** What `ownerColumns` reads. */
export interface OwnerColumns {
  ownerEmail: string;
  ownerFirstName: string;
  ownerLastName: string;
}

/** What every outbox claim takes: the time, when the lease ends, how many, and (tests) only these tenants'. */
export type ClaimParams = {
  now: string;
  leaseEnds: string;
  limit: number;
  onlyTenants: readonly string[] | null;
};
