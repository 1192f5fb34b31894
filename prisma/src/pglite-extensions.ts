import type { Extension } from '@electric-sql/pglite';

/**
 * The extensions the migrations create (pg_trgm, which the first search indexes used; btree_gin, which puts the
 * tenant into the GIN index of search prefixes). PGlite loads an extension only when it is given here, so every
 * PGlite that opens our database must be made with them. The contrib modules ship CommonJS builds, but their type
 * declarations are ESM-only: required, and typed here, when PGlite reads them rather than when this module loads,
 * so that a server on PostgreSQL never holds them.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
export const PGLITE_EXTENSIONS = {
  get pg_trgm(): Extension {
    return (require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension }).pg_trgm;
  },
  get btree_gin(): Extension {
    return (require('@electric-sql/pglite/contrib/btree_gin') as { btree_gin: Extension }).btree_gin;
  },
};
/* eslint-enable @typescript-eslint/no-require-imports */
