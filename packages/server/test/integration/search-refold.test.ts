import { sessionOf } from '@works-api/prisma/seed';
import { workSearchText } from '../../src/domain/search/fold';
import { refoldSearchTexts } from '../../src/domain/search/refold';
import { createTenant, ok } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The one-off re-fold of search texts the search migration folded in SQL (Latin accents only): once it ran, those
 * rows are found as the application folds, and a row renamed meanwhile keeps its own fold.
 */
let server: TestServer;
let owner: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser('Refold');
});
afterAll(() => server.close());

it('re-folds the texts the migration folded in SQL, once, leaving the others alone', async () => {
  const db = server.database;
  const session = sessionOf(db);
  const tenant = await createTenant(owner, 'Refold Ltd');
  const create = async (name: string) =>
    ok(
      await owner.client.POST('/tenants/{tenant_id}/works', {
        params: { path: { tenant_id: tenant.id } },
        body: { name },
      }),
    ).work;
  const ligature = await create('ﬁnancial Ωμέγα');
  const plain = await create('Plain report');
  // What the migration's SQL fold wrote for the first (no NFKD: the ligature and the Greek accent stay).
  await session.query(`UPDATE works SET search = ' ﬁnancial ωμέγα' WHERE id = $1::uuid`, [ligature.id]);
  const search = async (q: string) =>
    ok(
      await owner.client.GET('/tenants/{tenant_id}/works', {
        params: { path: { tenant_id: tenant.id }, query: { q } },
      }),
    ).works.edges.map((edge) => edge.node.id);
  expect(await search('financial')).toEqual([]);

  // As a database migrated from before would be: the re-fold still to do.
  await session.query(`DELETE FROM search_refolds`);
  expect(await refoldSearchTexts(db)).toBeGreaterThanOrEqual(1);
  expect(await search('financial ωμεγα')).toEqual([ligature.id]);
  expect(await search('fin')).toEqual([ligature.id]);
  expect(await search('plain')).toEqual([plain.id]);
  const [row] = await session.query<{ search: string }>(`SELECT search FROM works WHERE id = $1::uuid`, [ligature.id]);
  expect(row!.search).toBe(workSearchText(ligature));

  // Done: it does not run again (a text folded otherwise since stays as it is).
  await session.query(`UPDATE works SET search = ' stale' WHERE id = $1::uuid`, [plain.id]);
  expect(await refoldSearchTexts(db)).toBe(0);
  expect(await search('stale')).toEqual([plain.id]);
});
