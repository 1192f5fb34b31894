import type { Extension } from '@electric-sql/pglite';

// The contrib modules ship CommonJS builds, but their type declarations are ESM-only: required, and typed here.
/* eslint-disable @typescript-eslint/no-require-imports */
const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };
const { btree_gin } = require('@electric-sql/pglite/contrib/btree_gin') as { btree_gin: Extension };
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The extensions the migrations create (pg_trgm, which the first search indexes used; btree_gin, which puts the tenant
 * into the GIN index of search prefixes). PGlite
 * loads an extension only when it is given here, so every PGlite that opens our database must be made with them.
 */
export const PGLITE_EXTENSIONS = { pg_trgm, btree_gin };
