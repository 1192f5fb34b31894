import { Client } from 'pg';
import { log } from './run-context';

// The benchmark's own PostgreSQL databases: emptied (or created) before a run, and their URLs without passwords.

/**
 * Empties the benchmark's own database (creating it when missing). Refuses a database whose name does not say
 * it is for benchmarks. Returns the server version, or undefined when no PostgreSQL answers.
 */
export async function preparePostgres(url: string): Promise<string | undefined> {
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/bench/i.test(database)) {
    throw new Error(
      `BENCH_DATABASE_URL names the database "${database}": the benchmark empties it, so its name must contain "bench"`,
    );
  }
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') {
      const admin = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      await admin.end();
      return preparePostgres(url);
    }
    log(
      `PostgreSQL at ${redact(url)} does not answer (${code ?? (error as Error).message}): skipping it. Set BENCH_DATABASE_URL to use another.`,
    );
    return undefined;
  }
  try {
    await client.query('DROP SCHEMA IF EXISTS public CASCADE');
    await client.query('CREATE SCHEMA public');
    const [row] = (await client.query<{ server_version: string }>('SHOW server_version')).rows;
    return row?.server_version;
  } finally {
    await client.end();
  }
}

/**
 * The database of the --against build: the benchmark's own, with "_against" after its name (so it also says
 * "bench"), emptied like it.
 */
export async function againstDatabase(url: string): Promise<string> {
  const parsed = new URL(url);
  parsed.pathname = `${parsed.pathname}_against`;
  const against = parsed.toString();
  if (!(await preparePostgres(against))) throw new Error(`--against: PostgreSQL at ${redact(against)} does not answer`);
  return against;
}

export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
