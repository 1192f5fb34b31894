import type { LargeDatasetShape, LargeDatasetShapeName } from '@works-api/prisma/seed';
import type { Fixtures } from './fixtures';
import type { Service } from './processes';
import type { Measurement } from './report';
import type { Scenario, Target } from './scenarios';

// What the scale mode (scale.ts) gives back, and what it needs from the bench's runner.

export interface ScaleScenarioResult {
  id: string;
  title: string;
  kind: Scenario['kind'];
  empty: Measurement;
  large: Measurement;
  /** Large req/s ÷ empty req/s. */
  ratio: number;
  note?: string;
}

export interface ScaleResult {
  id: 'postgres' | 'pglite';
  title: string;
  shapeName: LargeDatasetShapeName;
  shape: LargeDatasetShape;
  /** Wall time of the load (migrations excluded, the final VACUUM ANALYZE included), and its steps. */
  loadMs: number;
  loadSteps: Array<{ step: string; ms: number }>;
  /** Size of the database after the load (PostgreSQL: pg_database_size; PGlite: its folder). */
  sizeBytes?: number;
  /** Where the deep page starts: after this many of the read work's requests, newest first. */
  deepPosition: { empty: number; large: number };
  scenarios: ScaleScenarioResult[];
  /** PostgreSQL only: the read scenarios measured while the janitors clear the data set's backlog. */
  duringCleanup?: DuringCleanup;
}

/** Expired rows the janitors have to delete (idempotency keys past expiry; webhook history past 30 days). */
export interface ExpiredRows {
  idempotencyKeys: number;
  webhookEvents: number;
  webhookDeliveries: number;
}

export interface DuringCleanup {
  /** Expired rows when the server started, when the measurements under clean-up ended, and at the end. */
  before: ExpiredRows;
  afterMeasuring: ExpiredRows;
  after: ExpiredRows;
  /** From the server's start until no expired row was left (undefined: not within the wait). */
  cleanupMs?: number;
  scenarios: Array<{ id: string; title: string; during: Measurement; settled: Measurement }>;
}

export interface ScaleHooks {
  log: (line: string) => void;
  startServer(name: string, env: Record<string, string>): Promise<Service>;
  /** Empties the PostgreSQL database (DROP SCHEMA public). */
  resetPostgres(url: string): Promise<unknown>;
  /** The bench's usual fixtures, created through the API. */
  createFixtures(url: string): Promise<Fixtures>;
  /** One scenario measured as the plain bench does (warm-up, run, rounds → median), server only. */
  measure(scenario: Scenario, service: Service, target: Target): Promise<Measurement>;
  /** A folder of the run's own, removed at the end. */
  workDir: string;
}
