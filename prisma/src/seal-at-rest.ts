import type { PrismaClient } from './generated/client';
import {
  idempotencyKeySlot,
  isSealed,
  keyIdOfSealed,
  SecretKeyError,
  type SecretBox,
  sealedWithKeyLike,
  webhookSecretSlot,
} from './secret-box';

/**
 * At start-up, after the migrations: every webhook signing secret not sealed with the current key in the row-bound
 * form (written by a release before sealing, or before values were bound to their row, or sealed with a key being
 * rotated out) is sealed with it, and stored idempotent responses still in plaintext are sealed. Each row is rewritten only if it is still what was read, so processes
 * starting together do not fight. A secret sealed with a key ENCRYPTION_KEYS no longer holds stops the start with
 * a message naming the key: deliveries could not be signed.
 */
export async function sealAtRest(db: PrismaClient, box: SecretBox): Promise<void> {
  const current = sealedWithKeyLike(box.sealingKeyId);
  const endpoints = await db.$queryRaw<Array<{ id: string; secret: string; previousSecret: string | null }>>`
    SELECT id, secret, previous_secret AS "previousSecret" FROM webhook_endpoints
    WHERE secret NOT LIKE ${current} OR (previous_secret IS NOT NULL AND previous_secret NOT LIKE ${current})`;
  for (const endpoint of endpoints) {
    const reseal = (value: string, column: 'secret' | 'previous_secret') =>
      box.seal(box.open(value, webhookSecretSlot(endpoint.id, column)), webhookSecretSlot(endpoint.id, column));
    for (const value of [endpoint.secret, endpoint.previousSecret]) {
      const keyId = value === null ? null : keyIdOfSealed(value);
      if (keyId !== null && !box.holds(keyId))
        throw new SecretKeyError(
          `webhook signing secrets are sealed with key ${keyId}, which ENCRYPTION_KEYS does not hold: set the ENCRYPTION_KEYS that wrote this data (keep old keys after the new one while rotating)`,
        );
    }
    await db.webhookEndpoint.updateMany({
      where: { id: endpoint.id, secret: endpoint.secret, previousSecret: endpoint.previousSecret },
      data: {
        secret: reseal(endpoint.secret, 'secret'),
        previousSecret: endpoint.previousSecret === null ? null : reseal(endpoint.previousSecret, 'previous_secret'),
      },
    });
  }
  // Replays sealed with an older key, or in the first form (bound to their purpose only), open while that key is
  // kept (24 hours) and expire; only plaintext ones are sealed here.
  // Expired ones are left to the janitor (never replayed, deleted within its rounds): a backlog of them (300k in the
  // large data set) would otherwise be rewritten one by one before the server listens (minutes on the large data set).
  const plaintext = await db.$queryRaw<Array<{ scope: string; key: string; body: string }>>`
    SELECT scope, key, body FROM idempotency_keys
    WHERE body IS NOT NULL AND body NOT LIKE 'sealed:v_:%' AND expires_at > now()`;
  for (const row of plaintext) {
    if (isSealed(row.body)) continue;
    await db.idempotencyKey.updateMany({
      where: { scope: row.scope, key: row.key, body: row.body },
      data: { body: box.seal(row.body, idempotencyKeySlot(row.scope, row.key)) },
    });
  }
}
