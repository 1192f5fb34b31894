import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import {
  applyMigrations,
  PGLITE_EXTENSIONS,
  pgliteSession,
  readMigrations,
  type SqlSession,
  withPgSession,
} from '@works-api/prisma';
import { scratchDatabase } from '../support/scratch-database';

/**
 * The migration mail_caps_across_tenants makes the rows written before it canonical: of a tenant's rows whose
 * addresses are one canonical address it keeps one (the one already canonical, else the oldest) under that address,
 * with the group's count of its latest day, stopped if any was; the others stay, so that the stop links naming them
 * keep working. The service-wide count starts from the tenants' counts of the latest day. On an empty database of
 * its own (PGlite in memory, or a scratch PostgreSQL database when DATABASE_URL is set), migrated to the one before,
 * filled, then migrated.
 */
const MIGRATION = 'mail_caps_across_tenants';

async function withEmptyDatabase(work: (session: SqlSession) => Promise<void>): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const scratch = await scratchDatabase(url, 'works_mail_caps');
    try {
      await withPgSession(scratch.url, work);
    } finally {
      await scratch.drop();
    }
    return;
  }
  const pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  try {
    await work(pgliteSession(pglite));
  } finally {
    await pglite.close();
  }
}

it('makes the mail_recipients rows canonical, keeps the old ones for their links, and seeds the service-wide counts', async () => {
  const migrations = readMigrations();
  const at = migrations.findIndex((migration) => migration.name.endsWith(`_${MIGRATION}`));
  expect(at).toBeGreaterThan(0);
  await withEmptyDatabase(async (session) => {
    await applyMigrations(session, migrations.slice(0, at));
    const [owner, first, second] = [randomUUID(), randomUUID(), randomUUID()];
    await session.query(`INSERT INTO users (id, email, first_name, last_name) VALUES ($1, 'o@example.com', 'O', 'W')`, [
      owner,
    ]);
    await session.query(
      `INSERT INTO tenants (id, name, slug, owner_id) VALUES ($1, 'First', 'first', $3), ($2, 'Second', 'second', $3)`,
      [first, second, owner],
    );
    const id = { plusOne: randomUUID(), plain: randomUUID(), plusTwo: randomUUID(), lone: randomUUID() };
    const secondTenants = randomUUID();
    await session.query(
      `INSERT INTO mail_recipients (tenant_id, email, id, day, sent, stopped_at) VALUES
         ($1, 'a+1@x.org', $3, '2026-12-06', 2, NULL),
         ($1, 'a@x.org', $4, '2026-12-06', 3, NULL),
         ($1, 'a+2@x.org', $5, '2026-12-05', 9, '2026-12-01T00:00:00Z'),
         ($1, 'b.c+news@googlemail.com', $6, '2026-12-04', 4, NULL),
         ($2, 'a+9@x.org', $7, '2026-12-06', 1, NULL)`,
      [first, second, id.plusOne, id.plain, id.plusTwo, id.lone, secondTenants],
    );
    expect(await applyMigrations(session, migrations.slice(0, at + 1))).toEqual([migrations[at]!.name]);

    const rows = await session.query<{ id: string; email: string; day: string; sent: number; stopped: boolean }>(
      `SELECT id, email, to_char(day, 'YYYY-MM-DD') AS day, sent, stopped_at IS NOT NULL AS stopped
       FROM mail_recipients ORDER BY email, id`,
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    // The canonical row of the first tenant is kept, with the count of the group's latest day and its stop.
    expect(byId.get(id.plain)).toMatchObject({ email: 'a@x.org', day: '2026-12-06', sent: 5, stopped: true });
    // The others keep their address and id: only their links point at them.
    expect(byId.get(id.plusOne)).toMatchObject({ email: 'a+1@x.org' });
    expect(byId.get(id.plusTwo)).toMatchObject({ email: 'a+2@x.org' });
    // A lone row is renamed in place (same id: its links name the canonical row).
    expect(byId.get(id.lone)).toMatchObject({ email: 'bc@gmail.com', sent: 4, stopped: false });
    expect(byId.get(secondTenants)).toMatchObject({ email: 'a@x.org', sent: 1 });
    const addresses = await session.query<{ email: string; day: string; sent: number }>(
      `SELECT email, to_char(day, 'YYYY-MM-DD') AS day, sent FROM mail_addresses ORDER BY email`,
    );
    expect(addresses).toEqual([
      { email: 'a@x.org', day: '2026-12-06', sent: 6 },
      { email: 'bc@gmail.com', day: '2026-12-04', sent: 4 },
    ]);
  });
}, 120_000);
