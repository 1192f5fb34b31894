import { countMembersAddedSql, newId } from '@works-api/prisma';
import { numberedSlug, slugify } from '@works-api/server/domain/slug';
import { workSearchText } from '@works-api/server/domain/search/fold';
import { type Actor, authorize } from './access';
import { HttpError } from './http-error';
import { actorRow, cursorOf, presentWork, userRecord, type WorkRow } from './present';
import type { Sql } from './sql';

// The baseline's tenant and work operations: create a tenant, read one, list and create its works.

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';
async function withUniqueSlug<T>(
  name: string,
  fallback: string,
  nextNumber: (base: string) => Promise<number>,
  create: (slug: string) => Promise<T>,
) {
  // As the server does: the base slug first, then the next number from the base's counter.
  const base = slugify(name, fallback);
  let slug = base;
  for (let attempt = 1; ; attempt++) {
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 10) throw error;
    }
    slug = numberedSlug(base, await nextNumber(base));
  }
}

export async function pageOfWorks(sql: Sql, tenantId: string, limit: number) {
  const [rows, [count]] = await Promise.all([
    sql.query<WorkRow & { first_name: string; last_name: string; email: string }>(
      `SELECT w.id, w.slug, w.name, w.description, w.created_at, w.updated_at, w.discarded_at, u.first_name, u.last_name, u.email
       FROM works w JOIN users u ON u.id = w.owner_id
       WHERE w.tenant_id = $1 AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT $2`,
      [tenantId, limit + 1],
    ),
    // The kept count, as the server reads it (no count(*)).
    sql.query<{ count: number }>(
      'SELECT coalesce(sum(kept_works), 0)::int AS count FROM tenant_counts WHERE tenant_id = $1',
      [tenantId],
    ),
  ]);
  const hasNextPage = rows.length > limit;
  const edges = rows.slice(0, limit).map((row) => ({ cursor: cursorOf(row.id), node: presentWork(row, row) }));
  return { totalCount: count?.count ?? 0, edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}

export async function createTenant(sql: Sql, actor: Actor, body: { name: string }) {
  const name = body.name.trim();
  const tenant = await withUniqueSlug(
    name,
    'tenant',
    async (base) =>
      (
        await sql.query<{ n: number }>(
          `INSERT INTO tenant_slug_counters AS c (base, last_number) VALUES ($1, 2)
           ON CONFLICT (base) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number AS n`,
          [base],
        )
      )[0]!.n,
    async (slug) => {
      // The tenant and its owner's membership in one statement: atomic, one round trip.
      const [row] = await sql.query<{ id: string; name: string; slug: string; created_at: Date; updated_at: Date }>(
        `WITH t AS (INSERT INTO tenants (id, name, slug, owner_id) VALUES ($1, $2, $3, $4) RETURNING *),
              m AS (INSERT INTO memberships (id, tenant_id, user_id, role) SELECT $5, t.id, $4, 'owner' FROM t
                    RETURNING tenant_id, user_id),
              ${countMembersAddedSql('m')}
         SELECT id, name, slug, created_at, updated_at FROM t`,
        [newId(), name, slug, actor.userId, newId()],
      );
      return row!;
    },
  );
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    owner: userRecord(actorRow(actor)),
    createdAt: tenant.created_at.toISOString(),
    updatedAt: tenant.updated_at.toISOString(),
    members: { nodes: [{ role: 'owner', user: userRecord(actorRow(actor)) }] },
    works: { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } },
  };
}

export async function getTenant(sql: Sql, actor: Actor, tenantId: string) {
  await authorize(sql, actor, tenantId, 'member');
  type Person = { first_name: string; last_name: string; email: string };
  const [[tenant], members, works] = await Promise.all([
    sql.query<{ id: string; name: string; slug: string; created_at: Date; updated_at: Date } & Person>(
      `SELECT t.id, t.name, t.slug, t.created_at, t.updated_at, u.first_name, u.last_name, u.email
       FROM tenants t JOIN users u ON u.id = t.owner_id WHERE t.id = $1`,
      [tenantId],
    ),
    sql.query<{ role: string } & Person>(
      `SELECT m.role, u.first_name, u.last_name, u.email FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.tenant_id = $1 ORDER BY m.id LIMIT 100`,
      [tenantId],
    ),
    pageOfWorks(sql, tenantId, 20),
  ]);
  if (!tenant) throw new HttpError(404, 'not_found');
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    owner: userRecord(tenant),
    createdAt: tenant.created_at.toISOString(),
    updatedAt: tenant.updated_at.toISOString(),
    members: { nodes: members.map((m) => ({ role: m.role, user: userRecord(m) })) },
    works,
  };
}

export async function createWork(
  sql: Sql,
  actor: Actor,
  tenantId: string,
  body: { name: string; description?: string },
) {
  await authorize(sql, actor, tenantId, 'member');
  const name = body.name.trim();
  const work = await withUniqueSlug(
    name,
    'work',
    async (base) =>
      (
        await sql.query<{ n: number }>(
          `INSERT INTO work_slug_counters AS c (tenant_id, base, last_number) VALUES ($1, $2, 2)
           ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number AS n`,
          [tenantId, base],
        )
      )[0]!.n,
    async (slug) =>
      (
        await sql.query<WorkRow>(
          `INSERT INTO works (id, tenant_id, slug, name, description, owner_id, search) VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, slug, name, description, created_at, updated_at, discarded_at`,
          [
            newId(),
            tenantId,
            slug,
            name,
            body.description ?? '',
            actor.userId,
            workSearchText({ name, slug, description: body.description ?? '' }),
          ],
        )
      )[0]!,
  );
  return presentWork(work, actorRow(actor));
}
