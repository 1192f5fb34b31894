import type { PGlite } from '@electric-sql/pglite';

/**
 * Where the data lives: a PostgreSQL server, or an embedded PGlite in a folder (in memory when none is given;
 * `loadDataDir` starts it from a dump, which tests use to skip initdb).
 */
export type DatabaseTarget =
  | {
      kind: 'postgres';
      url: string;
      /**
       * PostgreSQL cancels any statement of the pool that runs longer (SQLSTATE 57014, answered 503), so a few slow
       * statements cannot hold every connection. Unset or 0: no limit. Migrations run on their own session, without it.
       * PGlite has no equivalent: it accepts the setting but never enforces it (no timer signals in WebAssembly).
       */
      statementTimeoutMs?: number;
      /** ENCRYPTION_KEYS (secret-box.ts); without them this database cannot seal or open secrets. */
      encryptionKeys?: Buffer[];
    }
  | {
      kind: 'pglite';
      dataDir?: string;
      loadDataDir?: Blob;
      /**
       * A PGlite already open (and migrated) to serve instead of opening one; closing the database leaves it open.
       * The tests' embedded database: one per jest worker, emptied for each test file.
       */
      open?: PGlite;
      /** ENCRYPTION_KEYS; unset: the key file beside `dataDir`, or a key for this process when in memory. */
      encryptionKeys?: Buffer[];
    };

/** Where the data lives, without credentials, for start-up lines and the database tools. */
export function describeDatabase(target: DatabaseTarget): string {
  if (target.kind === 'pglite') return `embedded PGlite in ${target.dataDir ?? 'memory'}`;
  const url = new URL(target.url);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}
