/**
 * The database package: `openDatabase()` opens PGlite or PostgreSQL, applies the migrations and returns one
 * handle; the rest are the statements, counters and tools the server and the bench share. The generated Prisma
 * client is `@works-api/prisma/client`, the dump/restore tool `@works-api/prisma/dump`, the large data set
 * `@works-api/prisma/seed`.
 */
export * from './client';
export * from './counts';
export * from './encryption-keys';
export * from './handle';
export * from './ids';
export * from './migrate';
export * from './outage';
export * from './outbox-signal';
export * from './pglite-extensions';
export * from './pglite-lock';
export * from './seal-at-rest';
export * from './secret-box';
export * from './target';
export * from './statements';
