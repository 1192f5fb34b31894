import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sessionOf } from '@works-api/prisma/seed';
import { repoRoot } from '../../src/config';
import { MAX_SEARCH_TEXT_LENGTH, workSearchText } from '../../src/domain/search/fold';
import { createTenant, ok } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * What search stores and indexes stays bounded, however much folding grows a text (NFKD turns U+FDFA into 18
 * characters): the application stores at most MAX_SEARCH_TEXT_LENGTH characters of folded words, the database's
 * `search_prefixes` reads no further whoever wrote the text, and the texts stored longer before are cut.
 */
let server: TestServer;
let owner: TestUser;
/** The migration that capped `search_prefixes` and cut the texts stored longer. */
const MIGRATION = '20261207050812_search_text_capped';

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser('Capped');
});
afterAll(() => server.close());

const stored = async (table: 'works' | 'requests', id: string) => {
  const [row] = await sessionOf(server.database).query<{ length: number; prefixes: number; has: boolean }>(
    `SELECT length(search) AS length, cardinality(search_prefixes) AS prefixes, search_prefixes @> '{omega}' AS has
     FROM ${table} WHERE id = $1::uuid`,
    [id],
  );
  return row!;
};

it('stores and indexes at most MAX_SEARCH_TEXT_LENGTH characters of a request whose message folds 18 times larger', async () => {
  const tenant = await createTenant(owner, 'Flooded');
  const work = ok(
    await owner.client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenant.id } },
      body: { name: 'Flood' },
    }),
  ).work;
  const request = ok(
    await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenant.id, work_id: work.id } },
      body: { title: 'Quarterly figures', message: '\uFDFA'.repeat(5000), recipient: { email: 'grace@example.com' } },
    }),
  ).request;
  const row = await stored('requests', request.id);
  expect(row.length).toBeLessThanOrEqual(MAX_SEARCH_TEXT_LENGTH);
  expect(row.prefixes).toBeLessThan(MAX_SEARCH_TEXT_LENGTH);
  const found = ok(
    await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenant.id, work_id: work.id }, query: { q: 'quarterly الله' } },
    }),
  ).requests.edges.map((edge) => edge.node.id);
  expect(found).toEqual([request.id]);
});

it('indexes no more than MAX_SEARCH_TEXT_LENGTH characters of a text written longer, and the migration cuts it', async () => {
  const tenant = await createTenant(owner, 'Written long');
  const work = ok(
    await owner.client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenant.id } },
      body: { name: 'Alpha report' },
    }),
  ).work;
  const session = sessionOf(server.database);
  // As a server before the cap (or a restored dump) wrote it: about 10,000 characters, `omega` at the end.
  const long = ` alpha${' xy'.repeat(3331)} omega`;
  await session.query(`UPDATE works SET search = $2 WHERE id = $1::uuid`, [work.id, long]);
  const written = await stored('works', work.id);
  expect(written.length).toBe(long.length);
  expect(written.has).toBe(false); // past the cap: not indexed
  expect(written.prefixes).toBe(7); // a, al, alp, alph, alpha, x, xy: nothing further

  // A text within the cap, which the cut must leave as it is.
  const other = ok(
    await owner.client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenant.id } },
      body: { name: 'Omega report' },
    }),
  ).work;
  // The migration's statements for the texts stored longer: cut after the last whole word within the cap.
  const migration = readFileSync(path.join(repoRoot, 'prisma/migrations', MIGRATION, 'migration.sql'), 'utf8');
  const cuts = migration
    .split(';')
    .filter((statement) => /^\s*UPDATE "(works|requests)"/.test(statement.replace(/^(\s*--.*\n)*/, '')));
  expect(cuts).toHaveLength(2);
  for (const cut of cuts) await session.exec(cut);
  const [row] = await session.query<{ search: string }>(`SELECT search FROM works WHERE id = $1::uuid`, [work.id]);
  // ` alpha` (6) and 2,664 ` xy` (3 each) fill 7,998 characters: the next word would end past 8,000.
  expect(row!.search).toBe(` alpha${' xy'.repeat(2664)}`);
  expect((await stored('works', work.id)).prefixes).toBe(7);
  const [kept] = await session.query<{ search: string }>(`SELECT search FROM works WHERE id = $1::uuid`, [other.id]);
  expect(kept!.search).toBe(workSearchText(other));
});
