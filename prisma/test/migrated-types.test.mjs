// A database migrated by this process reads like one opened already migrated: PGlite learns how to send and read
// each array type when it opens, so the types a first run's migrations create afterwards (an enum's array) must be
// learned again (src/migrate.ts, `schemaChanged`). Run with `node --test` (`pnpm --filter @works-api/prisma test`),
// on the built package.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations, pgliteSession } from '../dist/index.js';

const migration = {
  name: '00000000000000_moods',
  sql: `CREATE TYPE "mood" AS ENUM ('calm', 'busy', 'away');
        CREATE TABLE "diary" ("id" INTEGER PRIMARY KEY, "moods" "mood"[] NOT NULL);`,
  checksum: 'moods',
};

describe('a PGlite migrated after it opened', () => {
  let pglite;
  before(async () => {
    pglite = new PGlite();
    assert.deepEqual(await applyMigrations(pgliteSession(pglite), [migration]), [migration.name]);
  });
  after(() => pglite.close());

  it("sends and reads an array of a type the migrations made (not the text 'calm,busy')", async () => {
    const { rows } = await pglite.query('INSERT INTO diary VALUES (1, $1) RETURNING moods', [['calm', 'busy']]);
    assert.deepEqual(rows, [{ moods: ['calm', 'busy'] }]);
    const matching = await pglite.query('SELECT id FROM diary WHERE moods && $1::mood[]', [['busy', 'away']]);
    assert.deepEqual(matching.rows, [{ id: 1 }]);
  });

  it('knows every array type the migrations made (of enums and of rows), as an open would', async () => {
    const { rows } = await pglite.query(
      `SELECT oid::int AS oid, typname FROM pg_type WHERE typcategory = 'A' AND typnamespace = 'public'::regnamespace`,
    );
    const unknown = rows.filter(({ oid }) => !pglite.serializers[oid] || !pglite.parsers[oid]);
    assert.deepEqual(
      unknown.map(({ typname }) => typname),
      [],
    );
    assert.deepEqual(rows.map(({ typname }) => typname).sort(), ['__prisma_migrations', '_diary', '_mood']);
  });
});
