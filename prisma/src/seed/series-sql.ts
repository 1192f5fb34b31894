import type { LargeDatasetShape } from './shapes';

// Where each kind of row sits in time, and the SQL expressions that make a row's time and id from its number.

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** Where row n (from 1) of one kind sits in time, and the salt that makes its id its own. */
interface Series {
  salt: string;
  startMs: number;
  stepMs: number;
}

/** `count` rows spread evenly over [fromMs, toMs). */
function series(salt: string, fromMs: number, toMs: number, count: number): Series {
  return {
    salt,
    startMs: Math.round(fromMs),
    stepMs: count > 1 ? Math.max(1, Math.floor((toMs - fromMs) / count)) : 0,
  };
}

// SQL expressions. `$1` is always the seed (the namespace); numbers are written in, never user input.
export const int = (value: number): string => {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
};
/** The time of row `n` of a series, in ms since the epoch (bigint). */
export const msOf = (s: Series, n: string) => `(${int(s.startMs)}::bigint + (${n} - 1)::bigint * ${int(s.stepMs)})`;
/**
 * A UUIDv7: `ms` as its 48-bit time, version 7, variant 10, the remaining 74 bits from an md5 of the seed and
 * `key`. `overlay … placing '8' from 4` puts the variant nibble in, so one md5 makes the whole id.
 */
export const uuid7 = (ms: string, key: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || left(overlay(md5($1 || ':' || ${key}) placing '8' from 4 for 0), 19))::uuid`;
export const idOf = (s: Series, n: string) => uuid7(msOf(s, n), `'${s.salt}:' || ${n}`);
export const timeOf = (ms: string) => `to_timestamp((${ms})::double precision / 1000)`;
/** The ms of a timestamptz(3) column, exactly. */
export const msOfColumn = (column: string) => `(extract(epoch from ${column}) * 1000)::bigint`;

/** Where each kind of row sits in time: a series per kind, ending before `atMs` (the moment of loading). */
export function seriesOf(shape: LargeDatasetShape, atMs: number) {
  return {
    heavyUser: series('heavy-user', atMs - 400 * DAY_MS, atMs - 400 * DAY_MS + 1, 1),
    users: series('user', atMs - 399 * DAY_MS, atMs - 380 * DAY_MS, shape.otherUsers),
    // The three groups of tenants spread over the same year: interleaved in id order, as real sign-ups are.
    heavyTenants: series('heavy-tenant', atMs - 370 * DAY_MS, atMs - 60 * DAY_MS, shape.heavyUserTenants),
    popularTenants: series('popular-tenant', atMs - 370 * DAY_MS + 7, atMs - 60 * DAY_MS, shape.popularNameTenants),
    otherTenants: series('other-tenant', atMs - 370 * DAY_MS + 13, atMs - 60 * DAY_MS, shape.otherTenants),
    members: series('member', atMs - 369 * DAY_MS, atMs - 368 * DAY_MS, shape.bigTenantMembers),
    endpoint: series('endpoint', atMs - 365 * DAY_MS, atMs - 365 * DAY_MS + 1, 1),
    revokedKeys: series('revoked-key', atMs - 360 * DAY_MS, atMs - 100 * DAY_MS, shape.revokedApiKeys),
    works: series('work', atMs - 360 * DAY_MS, atMs - 40 * DAY_MS, shape.bigTenantWorks),
    requests: series('request', atMs - 39 * DAY_MS, atMs - 2 * DAY_MS, shape.bigWorkRequests),
    webhookEvents: series('webhook-event', atMs - 90 * DAY_MS, atMs - 31 * DAY_MS, shape.webhookHistory),
    idempotencyKeys: series('idempotency-key', atMs - 48 * HOUR_MS, atMs - 25 * HOUR_MS, shape.expiredIdempotencyKeys),
    activeKey: series('active-key', atMs - DAY_MS, atMs - DAY_MS + 1, 1),
  };
}
