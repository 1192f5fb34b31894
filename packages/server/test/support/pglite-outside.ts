// `@electric-sql/pglite` (and its pg_trgm and btree_gin extensions) in the integration tests: the modules the test
// environment loaded once for the worker (environment.ts), not a copy of each per test file.
module.exports = (globalThis as unknown as Record<symbol, { modules: object }>)[
  Symbol.for('works-api.test.pglite')
]!.modules;
