/**
 * Values sealed by the release before sealed values were bound to their row (its SecretBox: `sealed:v1:`, the
 * purpose as associated data), with LEGACY_KEY, kept exactly as that code wrote them, so that tests prove this
 * release still opens them.
 */
export const LEGACY_KEY = 'dGVzdC1vbmx5LWtleS0tLS0tLS0tLS0tLS0tLS0tLS0=';

/** What LEGACY.replay holds: a POST /api-keys response. */
export const LEGACY_REPLAY_BODY = {
  apiKey: {
    id: '0190a1b2-0000-7000-8000-00000000f1a5',
    name: 'Legacy',
    prefix: 'wk_legacykey1',
    createdAt: '2026-11-20T10:00:00.000Z',
    lastUsedAt: null,
    revokedAt: null,
    secret: `wk_legacykey1_${'L'.repeat(43)}`,
  },
};

/** What LEGACY.webhookSecret holds. */
export const LEGACY_WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

export const LEGACY = {
  /** LEGACY_WEBHOOK_SECRET, sealed as a `webhook-secret`. */
  webhookSecret:
    'sealed:v1:9e0cf008:BbJputCw18YtxjOPRkwdTfoIg_7Epu-pdccydF6FyYPqT22C30qcAGPfneqtrABM8D9OCdpxKET4D7oWaEbWN-bM7C6GQJeNmUpyYcgl',
  /** LEGACY_REPLAY_BODY, sealed as an `idempotent-response`. */
  replay:
    'sealed:v1:9e0cf008:neiJJEWjJEYZxt6JLbL6ioYJZ7v4c21Ky-6RaMv0PZ_a6d9lOTmMWXwNwvtVB7Xxr3ZqB9IldT3UtoJiwaRYvhTNwkXOMrZqcnM8HceIbqM8MQba8bGB1aF-683_gM0CLLD-a79OftnxvPNz5MLjlr4pq3C6LVaeGkXMafXrdMn5EpheZOl6tpkxVeUyo9ROyBAKP0lfk_CAZNnQnwE5AE7yWlrqUfaYPk75XjNRtzHgPrGaQtkj7wHHiqPG51Vm1vdArKFbfil7dSz2C5RiBkCNWV5kEevFhuQK-JYebs7wMzPEE_KU_irMGJpuEJ4P3uLT-wWN9D69Kpu_7oYZ9PrQmDNIb-CURrdYEg',
} as const;
