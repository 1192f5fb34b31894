import { PGlite } from '@electric-sql/pglite';
import {
  LARGE_DATASET_SHAPES,
  type LargeDataset,
  type LargeDatasetShape,
  type LargeDatasetShapeName,
  loadLargeDataset,
  nthNewestRequestId,
} from '@works-api/prisma/seed';
import {
  applyMigrations,
  parseEncryptionKeys,
  PGLITE_EXTENSIONS,
  pgliteSession,
  SecretBox,
  type SqlSession,
  withPgSession,
} from '@works-api/prisma';
import { Cursors } from '@works-api/server/domain/cursors';
import { CursorEdge } from '@works-api/server/http/cursors';
import { loadSpec } from '@works-api/server/http/spec';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { callApi, type Fixtures } from './fixtures';
import { benchEncryptionKeys } from './processes';
import type { Measurement } from './report';
import { measureDuringCleanup } from './scale-cleanup';
import { inScaleOrder, runPhase, settle } from './scale-phases';
import { gb } from './scale-report';
import type { ScaleHooks, ScaleResult } from './scale-types';
import type { Scenario } from './scenarios';

/**
 * `pnpm bench -- --scale`: every scenario on an empty database, then the same scenarios on the large
 * data set (prisma/src/seed/large-dataset.ts), loaded with SQL in the same run, and the two side by side.
 * The real server in both phases, no baseline: what is compared is the server with itself as the data grows.
 */
export type { DuringCleanup, ExpiredRows, ScaleHooks, ScaleResult, ScaleScenarioResult } from './scale-types';
export { inScaleOrder } from './scale-phases';
export { formatDuringCleanup } from './scale-cleanup';
export { formatScale, scaleTargets } from './scale-report';

/** The popular name of the empty phase: the large data set's 20k tenants have it too ("Acme"). */
const POPULAR_NAME = 'Acme';
/** On the empty database: after the 5th of the fixture work's 25 requests, so the page is full. */
const EMPTY_DEEP_POSITION = 5;
/** On the large data set: 90% of the way into the big work's requests (900,000 of 1M). */
const LARGE_DEEP_FRACTION = 0.9;

export async function scalePostgres(
  url: string,
  shapeName: LargeDatasetShapeName,
  chosen: Scenario[],
  hooks: ScaleHooks,
): Promise<ScaleResult> {
  const { log } = hooks;
  const shape = LARGE_DATASET_SHAPES[shapeName];
  log(`\n== scale, PostgreSQL: empty database`);
  await hooks.resetPostgres(url);
  const empty = await hooks.startServer('works-api (PostgreSQL, empty)', { DATABASE_URL: url });
  let emptyResults: Map<string, Measurement>;
  try {
    emptyResults = await runPhase(chosen, empty, await emptyFixtures(empty.url, hooks), hooks);
  } finally {
    await empty.stop();
  }

  log(`\n== scale, PostgreSQL: loading the large data set (${shapeName} shape)`);
  await hooks.resetPostgres(url);
  const loaded = await withPgSession(url, async (session) => {
    await applyMigrations(session);
    const result = await load(session, shape, log);
    const [size] = await session.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return { ...result, sizeBytes: Number(size?.bytes) };
  });
  log(`  loaded in ${(loaded.loadMs / 1000).toFixed(1)} s, database ${gb(loaded.sizeBytes)}`);

  const duringCleanup = await measureDuringCleanup(url, chosen, largeFixtures(loaded), hooks);

  log(`\n== scale, PostgreSQL: large data set`);
  const large = await hooks.startServer('works-api (PostgreSQL, large)', { DATABASE_URL: url });
  try {
    await settle(large, url);
    const largeResults = await runPhase(chosen, large, largeFixtures(loaded), hooks);
    return {
      ...result('postgres', 'PostgreSQL, one server process', shapeName, loaded, chosen, emptyResults, largeResults),
      ...(duringCleanup && { duringCleanup }),
    };
  } finally {
    await large.stop();
  }
}

export async function scalePglite(
  shapeName: LargeDatasetShapeName,
  chosen: Scenario[],
  hooks: ScaleHooks,
): Promise<ScaleResult> {
  const { log } = hooks;
  const shape = LARGE_DATASET_SHAPES[shapeName];
  const emptyDir = path.join(hooks.workDir, 'scale-pglite-empty');
  const largeDir = path.join(hooks.workDir, 'scale-pglite-large');
  try {
    log(`\n== scale, embedded PGlite: empty database`);
    const empty = await hooks.startServer('works-api (PGlite, empty)', { PGLITE_DIR: emptyDir });
    let emptyResults: Map<string, Measurement>;
    try {
      emptyResults = await runPhase(chosen, empty, await emptyFixtures(empty.url, hooks), hooks);
    } finally {
      await empty.stop();
    }
    rmSync(emptyDir, { recursive: true, force: true });

    // PGlite belongs to one process: load the folder here, close it, then start the server on it.
    log(`\n== scale, embedded PGlite: loading the large data set (${shapeName} shape)`);
    const pglite = new PGlite(largeDir, { extensions: PGLITE_EXTENSIONS });
    let loaded: Loaded;
    try {
      const session = pgliteSession(pglite);
      await applyMigrations(session);
      loaded = await load(session, shape, log);
    } finally {
      await pglite.close();
    }
    loaded.sizeBytes = folderBytes(largeDir);
    log(`  loaded in ${(loaded.loadMs / 1000).toFixed(1)} s, folder ${gb(loaded.sizeBytes)}`);

    log(`\n== scale, embedded PGlite: large data set`);
    const large = await hooks.startServer('works-api (PGlite, large)', { PGLITE_DIR: largeDir });
    try {
      await settle(large);
      const largeResults = await runPhase(chosen, large, largeFixtures(loaded), hooks);
      return result(
        'pglite',
        'Embedded PGlite, one server process',
        shapeName,
        loaded,
        chosen,
        emptyResults,
        largeResults,
      );
    } finally {
      await large.stop();
    }
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
    rmSync(largeDir, { recursive: true, force: true });
  }
}

interface Loaded {
  dataset: LargeDataset;
  loadMs: number;
  deepPosition: number;
  deepCursor: string;
  sizeBytes?: number;
}

async function load(session: SqlSession, shape: LargeDatasetShape, log: (line: string) => void): Promise<Loaded> {
  const started = Date.now();
  const dataset = await loadLargeDataset(session, shape);
  const loadMs = Date.now() - started;
  for (const { step, ms } of dataset.timings) log(`  ${step.padEnd(28)} ${(ms / 1000).toFixed(1).padStart(6)} s`);
  const deepPosition = Math.max(1, Math.floor(shape.bigWorkRequests * LARGE_DEEP_FRACTION));
  // The cursor the server would hand out for that request (signed with the keys the bench gives every server).
  const cursors = new Cursors(new SecretBox(parseEncryptionKeys(benchEncryptionKeys())).derivedKeys('cursor'));
  const deepCursor = new CursorEdge(loadSpec(), cursors).cursorOf(
    { operationId: 'listRequests', path: { tenant_id: dataset.bigTenantId, work_id: dataset.bigWorkId } },
    await nthNewestRequestId(session, dataset.bigWorkId, deepPosition),
  );
  return { dataset, loadMs, deepPosition, deepCursor };
}

/** The bench's fixtures, plus the popular name and a cursor a few requests into the read work. */
async function emptyFixtures(url: string, hooks: ScaleHooks): Promise<Fixtures> {
  const fixtures = await hooks.createFixtures(url);
  const { requests: page } = await callApi<{ requests: { pageInfo: { endCursor: string | null } } }>(
    url,
    fixtures.apiKey,
    'GET',
    `/v1/tenants/${fixtures.readTenantId}/works/${fixtures.readWorkId}/requests?limit=${EMPTY_DEEP_POSITION}`,
  );
  if (!page.pageInfo.endCursor) throw new Error('bench set-up: the fixture work has no requests');
  return { ...fixtures, scale: { popularName: POPULAR_NAME, deepCursor: page.pageInfo.endCursor } };
}

/**
 * The same roles on the large data set: the heavy user (100k tenants, 1,001 API keys) reads and writes the big
 * tenant (200k works, 101 members) and its big work (1M requests).
 */
function largeFixtures({ dataset, deepCursor }: Loaded): Fixtures {
  return {
    apiKey: dataset.heavyUser.apiKey,
    // The scale mode compares data sizes, not keys: its restricted scenarios send the full key on the large data set.
    restrictedApiKey: dataset.heavyUser.apiKey,
    readTenantId: dataset.bigTenantId,
    readWorkId: dataset.bigWorkId,
    writeTenantId: dataset.bigTenantId,
    requestWorkId: dataset.bigWorkId,
    scale: { popularName: dataset.popularName, deepCursor },
  };
}

function result(
  id: ScaleResult['id'],
  title: string,
  shapeName: LargeDatasetShapeName,
  loaded: Loaded,
  chosen: Scenario[],
  empty: Map<string, Measurement>,
  large: Map<string, Measurement>,
): ScaleResult {
  return {
    id,
    title,
    shapeName,
    shape: loaded.dataset.shape,
    loadMs: loaded.loadMs,
    loadSteps: loaded.dataset.timings,
    sizeBytes: loaded.sizeBytes,
    deepPosition: { empty: EMPTY_DEEP_POSITION, large: loaded.deepPosition },
    scenarios: inScaleOrder(chosen).map((scenario) => {
      const e = empty.get(scenario.id)!;
      const l = large.get(scenario.id)!;
      const notes = [
        [e, l].some((m) => m.errors > 0)
          ? `errors (non-2xx, timeouts): empty ${e.errors} (answers ${JSON.stringify(e.statusCodes)}), ` +
            `large ${l.errors} (answers ${JSON.stringify(l.statusCodes)})`
          : undefined,
        e.note && `empty: ${e.note}`,
        l.note && `large: ${l.note}`,
      ].filter(Boolean);
      const errors = notes.length > 0 ? notes.join('; ') : undefined;
      return {
        id: scenario.id,
        title: scenario.title,
        kind: scenario.kind,
        empty: e,
        large: l,
        ratio: e.rps > 0 ? l.rps / e.rps : 0,
        ...(errors && { note: errors }),
      };
    }),
  };
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}
