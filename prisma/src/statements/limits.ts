import type { Prisma } from '../generated/client';
import { sendStatement } from './send';

/**
 * What a per-owner cap counts, and the owner's row it locks: an index must serve each count (`:ownerId` is the
 * owner's id).
 */
const CAPPED = {
  // Served by the partial index api_keys_active_user_id_idx: revoked keys are never read.
  activeApiKeys: { lock: 'users', counted: 'FROM api_keys WHERE user_id = :ownerId::uuid AND revoked_at IS NULL' },
  webhookEndpoints: { lock: 'tenants', counted: 'FROM webhook_endpoints WHERE tenant_id = :ownerId::uuid' },
} as const;

/** What a cap counts: a user's active API keys, a tenant's webhook endpoints. */
export type CappedResource = keyof typeof CAPPED;

/**
 * Inside a transaction: locks the owner's row (`FOR NO KEY UPDATE`: inserts that reference it still go through),
 * then counts what the owner has, reading at most `cap` rows whatever they have. The count is a statement of its
 * own, after the lock, so it sees every creation committed before it.
 */
export async function lockOwnerAndCount(
  tx: Prisma.TransactionClient,
  resource: CappedResource,
  ownerId: string,
  cap: number,
): Promise<number> {
  const { lock, counted } = CAPPED[resource];
  await sendStatement(tx, `SELECT 1 FROM ${lock} WHERE id = :ownerId::uuid FOR NO KEY UPDATE`, { ownerId });
  const [row] = await sendStatement<{ n: number }>(
    tx,
    `SELECT count(*)::int AS n FROM (SELECT 1 ${counted} LIMIT :cap) bounded`,
    { ownerId, cap },
  );
  return row?.n ?? 0;
}
