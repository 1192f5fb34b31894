import type { Db } from '../handle';
import type { SqlSession } from '../migrate';
import { countsOf } from './expected-counts';
import {
  activeApiKey,
  type DatasetIds,
  type Load,
  loadBigTenant,
  loadBigWork,
  loadExpiredIdempotencyKeys,
  loadTenants,
  loadUsers,
  loadWebhookHistory,
} from './load-steps';
import { idOf, int, seriesOf } from './series-sql';
import { checkShape, type LargeDataset, type LargeDatasetShape, type LoadLargeDatasetOptions } from './shapes';

/**
 * The large data set, loaded with plain SQL (`INSERT … SELECT … generate_series`, one statement per
 * table or two, no round trip per row), for `pnpm bench -- --scale` and for tests that need a seeded database.
 * One loader for both, so that what the benchmark measures and what the tests check are the same data.
 *
 * What it holds (the `production` shape; `pglite` is about a tenth of it, `small` is for tests):
 *
 * | rows | production | pglite | small | how |
 * | --- | ---: | ---: | ---: | --- |
 * | tenants of the heavy user | 100,000 | 10,000 | 2,000 | "Studio n" (slug `studio-n`); its oldest is the big tenant, "Big Studio" |
 * | tenants named "Acme" | 20,000 | 2,000 | 500 | slugs `acme`, `acme-2`, … `acme-20000`, owned by the other users |
 * | other tenants | 200,000 | 20,000 | 2,000 | "Org n", owned by the other users |
 * | other users | 20,000 | 2,000 | 200 | owners of the Acme and other tenants; the first ones are the big tenant's members |
 * | members of the big tenant | 100 | 100 | 30 | besides its owner; the first tenth admins |
 * | works of the big tenant | 200,000 | 20,000 | 5,000 | every tenth discarded; the newest is the big work |
 * | requests of the big work | 1,000,000 | 100,000 | 20,000 | 60% pending, 15% confirmed, 10% validated, 5% validated early, 10% cancelled |
 * | request events | 500,000 | 50,000 | 10,000 | the events of those transitions (validated: confirm then validate) |
 * | revoked API keys of the heavy user | 1,000 | 1,000 | 200 | besides its one active key |
 * | expired idempotency keys | 300,000 | 30,000 | 3,000 | stored 201 responses whose 24 hours ended 1 to 24 hours ago |
 * | webhook events and deliveries past retention | 300,000 each | 30,000 | 3,000 | 31 to 90 days old, delivered, to one disabled endpoint of the big tenant |
 *
 * Every tenant has its owner's membership. Rows are valid for the application: ids are UUIDv7 whose time is the
 * row's `createdAt`, every row older than `at` (so rows the API creates afterwards are newer, as keyset paging
 * expects); the three groups of tenants are interleaved in time; slugs follow the slug rules; statuses carry the
 * fields and events their transitions set. The heavy user's one active API key has a secret derived from the
 * namespace, returned in the result: load this only into databases made for benchmarks and tests.
 *
 * Deterministic: the same shape, namespace and `at` give the same rows (the random part of each id is an md5 of
 * the namespace, the kind of row and its number). It ends with `VACUUM (ANALYZE)` of the tables it filled, so that
 * plans and index-only scans are those of a settled database. Works on PostgreSQL and PGlite (`SqlSession`).
 */
export {
  LARGE_DATASET_SHAPES,
  type LargeDataset,
  type LargeDatasetShape,
  type LargeDatasetShapeName,
  type LoadLargeDatasetOptions,
} from './shapes';

/** Loads the data set (see above) into a migrated database; returns what a benchmark or test needs to use it. */
export async function loadLargeDataset(
  session: SqlSession,
  shape: LargeDatasetShape,
  options: LoadLargeDatasetOptions = {},
): Promise<LargeDataset> {
  const namespace = options.namespace ?? '';
  if (!/^[a-z0-9]{0,20}$/.test(namespace)) throw new Error('namespace: lower-case letters and digits, at most 20');
  checkShape(shape);
  const at = options.at ?? new Date();
  const tag = namespace ? `-${namespace}` : '';
  const nameTag = namespace ? ` ${namespace}` : '';
  const seed = `works-api-large-dataset${tag}`;
  const s = seriesOf(shape, at.getTime());

  const [ids] = await session.query<DatasetIds>(
    `SELECT ${idOf(s.heavyUser, '1')} AS heavy_user, ${idOf(s.heavyTenants, '1')} AS big_tenant,
            ${idOf(s.works, int(shape.bigTenantWorks))} AS big_work, ${idOf(s.endpoint, '1')} AS endpoint,
            ${idOf(s.activeKey, '1')} AS active_key`,
    [seed],
  );
  if (!ids) throw new Error('computing the ids returned nothing');
  const timings: LargeDataset['timings'] = [];
  const load: Load = {
    shape,
    tag,
    nameTag,
    s,
    ids,
    heavyEmail: `scale-heavy${tag}@example.com`,
    apiKey: activeApiKey(seed),
    popularName: `Acme${nameTag}`,
    popularSlug: `acme${tag}`,
    otherUserId: (n) => idOf(s.users, n),
    async step(name, sql, params = []) {
      const started = Date.now();
      await session.query(sql, [seed, ...params]);
      timings.push({ step: name, ms: Date.now() - started });
    },
  };

  await loadUsers(load);
  await loadTenants(load);
  await loadBigTenant(load);
  await loadBigWork(load);
  await loadExpiredIdempotencyKeys(load);
  await loadWebhookHistory(load);

  const started = Date.now();
  await session.query(
    `VACUUM (ANALYZE) users, api_keys, tenants, memberships, works, requests, request_events, idempotency_keys,
                      webhook_endpoints, webhook_events, webhook_deliveries`,
  );
  timings.push({ step: 'vacuum and analyze', ms: Date.now() - started });

  return {
    shape,
    namespace,
    at,
    heavyUser: { id: ids.heavy_user, email: load.heavyEmail, apiKeyId: ids.active_key, apiKey: load.apiKey.secret },
    bigTenantId: ids.big_tenant,
    bigWorkId: ids.big_work,
    popularName: load.popularName,
    popularSlug: load.popularSlug,
    webhookEndpointId: ids.endpoint,
    counts: countsOf(shape),
    timings,
  };
}

/**
 * The id of the request at `position` (from 1) in a work's list, newest first (with `status`, in that filtered
 * list): the `after` cursor of a page deep in it is this id's cursor. One index walk; for setting up, not for
 * requests.
 */
export async function nthNewestRequestId(
  session: SqlSession,
  workId: string,
  position: number,
  status?: 'pending' | 'confirmed' | 'validated' | 'cancelled',
): Promise<string> {
  const [row] = await session.query<{ id: string }>(
    `SELECT id FROM requests WHERE work_id = $1::uuid AND ($2::request_status IS NULL OR status = $2::request_status)
     ORDER BY id DESC OFFSET $3 LIMIT 1`,
    [workId, status ?? null, position - 1],
  );
  if (!row) throw new Error(`the work has fewer than ${position} requests${status ? ` ${status}` : ''}`);
  return row.id;
}

/** A session on the app's own connections (`openDatabase`'s client): to load into the database a test server uses. */
export function sessionOf(db: Db): SqlSession {
  return {
    exec: async (sql) => void (await db.statement(sql, [])),
    query: (sql, params = []) => db.statement(sql, params),
  };
}
