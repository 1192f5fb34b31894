import type { Db } from '../handle';
import { sendStatement } from './send';

/**
 * The next number for a slug base that is taken: one upsert on the base's counter row, which holds the highest
 * number taken after the base (`acme` → 20000 once `acme-20000` exists). The row's lock makes concurrent bumps
 * of one base return different numbers. A trigger on tenants and works (the `row_counts` migration) raises the
 * counter for every numbered slug inserted, whoever inserts it, so a number is never one a row already has
 * (unless that row's base was shortened to fit 60 characters: the caller's retry covers it).
 */
export async function nextTenantSlugNumber(db: Db, base: string): Promise<number> {
  const [row] = await sendStatement<{ n: number }>(
    db,
    `INSERT INTO tenant_slug_counters AS c (base, last_number) VALUES (:base, 2)
     ON CONFLICT (base) DO UPDATE SET last_number = c.last_number + 1
     RETURNING last_number AS n`,
    { base },
  );
  return row!.n;
}

/** The same for work slugs, which are unique within their tenant. */
export async function nextWorkSlugNumber(db: Db, tenantId: string, base: string): Promise<number> {
  const [row] = await sendStatement<{ n: number }>(
    db,
    `INSERT INTO work_slug_counters AS c (tenant_id, base, last_number) VALUES (:tenantId::uuid, :base, 2)
     ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = c.last_number + 1
     RETURNING last_number AS n`,
    { tenantId, base },
  );
  return row!.n;
}
