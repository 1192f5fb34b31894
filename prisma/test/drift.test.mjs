// The schema/migrations drift gate (`pnpm check:drift`), shown to catch purpose-made drift in both directions, and
// the migration `pnpm db:migration` writes shown to close it. Run with `node --test` (`pnpm --filter
// @works-api/prisma test`); each comparison starts throw-away PGlite databases, so there are few of them.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { diffMigrationsToSchema, migrationsDir, schemaFile, schemaForPrisma6 } from '../scripts/migrations.mjs';

const schema = readFileSync(schemaFile, 'utf8');
const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-drift-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of prisma/migrations to break. */
function migrationsCopy(name) {
  const dir = path.join(scratch, name);
  cpSync(migrationsDir, dir, { recursive: true });
  return dir;
}

function mutate(text, from, to) {
  assert.equal(text.split(from).length, 2, `expected exactly one occurrence of:\n${from}`);
  return text.replace(from, to);
}

// Each comparison is a few seconds of CPU in child processes: run them side by side.
describe('drift between prisma/schema.prisma and prisma/migrations', { concurrency: true }, () => {
  it('is found when the schema changes without a migration, and gone once the written migration is added', () => {
    const changed = mutate(
      schema,
      '  @@index([expiresAt])\n  @@map("idempotency_keys")\n',
      '  @@index([expiresAt])\n  @@index([lockedAt])\n  @@map("idempotency_keys")\n',
    );
    const drift = diffMigrationsToSchema({ schema: changed, as: 'sql' });
    assert.equal(drift.empty, false);
    assert.match(drift.sql, /CREATE INDEX "idempotency_keys_locked_at_idx" ON "idempotency_keys"\("locked_at"\)/);

    // What `pnpm db:migration` does with that SQL, in a copy of the migrations folder.
    const migrations = migrationsCopy('with-new-migration');
    mkdirSync(path.join(migrations, '29991231235959_index_locked_at'));
    writeFileSync(path.join(migrations, '29991231235959_index_locked_at', 'migration.sql'), `${drift.sql}\n`);
    assert.deepEqual(diffMigrationsToSchema({ migrations, schema: changed }), { empty: true });
  });

  it('is found when a migration the schema relies on is missing', () => {
    const migrations = migrationsCopy('missing-migration');
    // A migration no later one builds on (a later ALTER of what it made would fail first).
    rmSync(path.join(migrations, '20261207180000_idempotency_key_results'), { recursive: true });
    const drift = diffMigrationsToSchema({ migrations });
    assert.equal(drift.empty, false);
    assert.match(drift.summary, /Changed the `idempotency_keys` table\n\s+\[\+\] Added column `result`/);
  });
});

describe('the schema as Prisma 6.19 reads it', () => {
  it('gains the datasource url and loses the generator', () => {
    const converted = schemaForPrisma6(schema);
    assert.match(converted, /datasource db \{\n {2}url = env\("DATABASE_URL"\)\n {2}provider = "postgresql"\n\}/);
    assert.doesNotMatch(converted, /generator/);
  });

  it('is left alone when it already has a url (a schema from before Prisma 7)', () => {
    const prisma6Schema = 'datasource db {\n  provider = "postgresql"\n  url      = env("DATABASE_URL")\n}\n';
    assert.equal(schemaForPrisma6(prisma6Schema), prisma6Schema);
  });
});
