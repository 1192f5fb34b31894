import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

export interface ScratchDatabase {
  url: string;
  /** Ends every session; with `allowNew: false` the database also refuses new ones until `allowConnections`. */
  disconnectEveryone(options: { allowNew: boolean }): Promise<void>;
  allowConnections(): Promise<unknown>;
  /**
   * Sets (or with null resets) a setting of the database: new sessions start with it, existing ones keep theirs.
   * `default_transaction_read_only` makes it answer like a hot standby does to writes (SQLSTATE 25006).
   */
  set(setting: string, value: string | null): Promise<unknown>;
  drop(): Promise<void>;
}

/**
 * A PostgreSQL database of the test's own on the server `url` points at: what the test does to it (make it
 * unreachable, fill it with a data set whose statistics it relies on) affects no other test file, and the other
 * files' rows do not change what it sees.
 */
export async function scratchDatabase(url: string, prefix = 'works_scratch'): Promise<ScratchDatabase> {
  // Named after the database `url` names too, so that runs on one server against different databases (one per
  // checkout, per jest worker) keep to their own names.
  const owner = new URL(url).pathname
    .slice(1)
    .replace(/[^a-z0-9_]/g, '')
    .slice(0, 20);
  const name = `${owner ? `${owner}_` : ''}${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: Object.assign(new URL(url), { pathname: `/${name}` }).toString(),
    async disconnectEveryone({ allowNew }) {
      if (!allowNew) await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    },
    allowConnections: () => admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`),
    set: (setting, value) =>
      admin.query(
        value === null
          ? `ALTER DATABASE ${name} RESET ${setting}`
          : `ALTER DATABASE ${name} SET ${setting} = ${admin.escapeLiteral(value)}`,
      ),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
