import { int } from './series-sql';
import type { LargeDataset, LargeDatasetShape } from './shapes';

// The rules the SQL and the counts share (the status mix, which works are discarded), and the counts they give.

/**
 * The status of request n of the big work, by n % 20: 12 in 20 pending, 3 confirmed, 2 validated, 1 validated
 * early, 2 cancelled. One rule for the SQL and the counts.
 */
export const REQUEST_MIX = [
  { status: 'pending', from: 0, to: 11 },
  { status: 'confirmed', from: 12, to: 14 },
  { status: 'validated', from: 15, to: 16 },
  { status: 'validated', from: 17, to: 17 }, // early
  { status: 'cancelled', from: 18, to: 19 },
] as const;

/** Every tenth work is discarded (n % 10 = 5), except the big work (the last one). */
const isDiscarded = (n: number, works: number) => n % 10 === 5 && n !== works;
export const discardedSql = (n: string, works: number) => `(${n} % 10 = 5 AND ${n} <> ${int(works)})`;

export function countsOf(shape: LargeDatasetShape): LargeDataset['counts'] {
  let discarded = 0;
  for (let n = 1; n <= shape.bigTenantWorks; n++) if (isDiscarded(n, shape.bigTenantWorks)) discarded++;
  const byStatus = { pending: 0, confirmed: 0, validated: 0, cancelled: 0 };
  // Per block of 20 requests, then the rest.
  const full = Math.floor(shape.bigWorkRequests / 20);
  const rest = shape.bigWorkRequests % 20;
  let events = 0;
  for (let r = 0; r < 20; r++) {
    const times = full + (r >= 1 && r <= rest ? 1 : 0); // n = 20k + r, n from 1: r = 1..rest are the extra ones
    const mix = REQUEST_MIX.find((m) => r >= m.from && r <= m.to)!;
    byStatus[mix.status] += times;
    events += times * (mix.status === 'pending' ? 0 : r === 15 || r === 16 ? 2 : 1);
  }
  return {
    users: 1 + shape.otherUsers,
    tenants: shape.heavyUserTenants + shape.popularNameTenants + shape.otherTenants,
    heavyUserTenants: shape.heavyUserTenants,
    bigTenantMembers: shape.bigTenantMembers + 1,
    bigTenantKeptWorks: shape.bigTenantWorks - discarded,
    bigTenantDiscardedWorks: discarded,
    bigWorkRequests: shape.bigWorkRequests,
    bigWorkByStatus: byStatus,
    requestEvents: events,
    heavyUserApiKeys: 1 + shape.revokedApiKeys,
  };
}
