// The current definition of every database function and trigger, one file each (functions/<name>.sql,
// triggers/<table>.<name>.sql), as a database migrated from nothing defines it: the migrations stay the history, these
// files are where a reader finds what runs now. CI fails when a migration changes a definition and its file was not
// regenerated: `UPDATE_DEFINITIONS=1 pnpm --filter @works-api/prisma test` rewrites them. Run with `node --test`, on
// the built package.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations, PGLITE_EXTENSIONS, pgliteSession } from '../dist/index.js';

const root = path.resolve(import.meta.dirname, '..');
const update = process.env.UPDATE_DEFINITIONS === '1';

/** `{ file: text }` of one folder's .sql files. */
function readFolder(folder) {
  const dir = path.join(root, folder);
  let names = [];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.sql'));
  } catch {
    // none yet
  }
  return Object.fromEntries(names.map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
}

function writeFolder(folder, files) {
  const dir = path.join(root, folder);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
}

describe('the definitions of the database functions and triggers', () => {
  let pglite;
  const migrated = {};
  before(async () => {
    pglite = new PGlite({ extensions: { pg_trgm: PGLITE_EXTENSIONS.pg_trgm, btree_gin: PGLITE_EXTENSIONS.btree_gin } });
    await applyMigrations(pgliteSession(pglite));
    // Ours only: not the extensions' (pg_trgm's, btree_gin's), which live in the same schema.
    const functions = await pglite.query(
      `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p
       WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
       ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
    );
    migrated.functions = {};
    for (const { name, definition } of functions.rows) {
      const file = `${name}.sql`;
      migrated.functions[file] = `${migrated.functions[file] ?? ''}${definition.trim()};\n`;
    }
    const triggers = await pglite.query(
      `SELECT t.tgrelid::regclass::text AS "table", t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
       FROM pg_trigger t WHERE NOT t.tgisinternal ORDER BY 1, 2`,
    );
    migrated.triggers = Object.fromEntries(
      triggers.rows.map(({ table, name, definition }) => [`${table}.${name}.sql`, `${definition};\n`]),
    );
    if (update) {
      writeFolder('functions', migrated.functions);
      writeFolder('triggers', migrated.triggers);
    }
  });
  after(() => pglite.close());

  for (const folder of ['functions', 'triggers']) {
    it(`prisma/${folder}/ holds each one as the migrations leave it (UPDATE_DEFINITIONS=1 rewrites them)`, () => {
      assert.ok(Object.keys(migrated[folder]).length > 0);
      assert.deepEqual(readFolder(folder), migrated[folder]);
    });
  }
});
