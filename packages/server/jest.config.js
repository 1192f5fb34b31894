const { availableParallelism } = require('node:os');

/** Shared by both projects: TypeScript through swc, and the generated Prisma client's './x.js' imports. */
const base = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
    // json-schema-faker (the spec-driven fuzz test) ships only ES modules: compiled to CommonJS like our sources.
    'json-schema-faker/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/json-schema-faker@[^/]+/node_modules/)?json-schema-faker/)'],
  moduleNameMapper: {
    '^json-schema-faker$': '<rootDir>/node_modules/json-schema-faker/dist/index.js',
    // The database package from its sources, as the server's own files are: a change there needs no build first.
    '^@works-api/prisma$': '<rootDir>/../../prisma/src/index.ts',
    '^@works-api/prisma/client$': '<rootDir>/../../prisma/src/generated/client.ts',
    '^@works-api/prisma/seed$': '<rootDir>/../../prisma/src/seed/large-dataset.ts',
    '^@works-api/prisma/(dump|target|encryption-keys|legacy-sealed)$': '<rootDir>/../../prisma/src/$1.ts',
    // The generated Prisma client imports its own files as './x.js'; in tests those are the .ts sources.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};

/**
 * Two projects: `unit` (src/**: pure functions, no database, no server; `pnpm test:unit` runs only these) and
 * `integration` (test/**: the real app over HTTP, spawned servers, on PGlite or DATABASE_URL). The integration
 * project's global setup builds the migrated database template; the unit project needs none.
 * @type {import('jest').Config}
 */
module.exports = {
  // A global option: project configs cannot set it.
  testTimeout: 30_000,
  // Each file starts its own server (and, on PGlite, empties its worker's database). One worker a core, plus one: a file also waits (on sockets, on
  // its server's start), and a third worker fills those waits (2 cores, whole suite: 267 s with 2 workers, 221 s
  // with 3); at most four (memory).
  maxWorkers: Math.min(4, availableParallelism() + 1),
  // A worker that holds more than this after a test file is replaced. PGlite's WebAssembly heaps are not given back
  // within one process, so running every file in one process (what Jest does with one worker), each file with
  // databases of its own, grew past 10 GB.
  // Setting a limit also makes Jest use a worker process even when there is only one.
  workerIdleMemoryLimit: '1.5GB',
  // The embedded PostgreSQL arms a timer (its idle statistics flush, about a second) after each statement, and
  // PGlite's close() leaves the last one pending: a worker that opened a database takes up to two seconds to exit
  // by itself. Wait for that instead of killing it (the default half second).
  workerGracefulExitTimeout: 3_000,
  projects: [
    { ...base, displayName: 'unit', roots: ['<rootDir>/src'] },
    {
      ...base,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      setupFiles: ['<rootDir>/test/support/setup-worker-database.ts'],
      // One embedded database per worker, emptied for each file, and PGlite's modules loaded once with it, outside
      // the files' sandboxes (see the environment).
      testEnvironment: '<rootDir>/test/support/environment.ts',
      moduleNameMapper: {
        '^@electric-sql/pglite(/contrib/(pg_trgm|btree_gin))?$': '<rootDir>/test/support/pglite-outside.ts',
        ...base.moduleNameMapper,
      },
    },
  ],
};
