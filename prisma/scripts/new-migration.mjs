// `pnpm db:migration <what_changed>`: writes what prisma/schema.prisma has that prisma/migrations do not create
// as prisma/migrations/<UTC timestamp>_<what_changed>/migration.sql. Offline, no database server needed.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { diffMigrationsToSchema, migrationsDir } from './migrations.mjs';

const usage = 'usage: pnpm db:migration <what_changed>   (lower-case words joined by _, e.g. add_work_tags)';
const args = process.argv.slice(2).filter((arg) => arg !== '--');
const name = args[0];
if (args.length !== 1 || !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(name) || name.length > 60) {
  console.error(usage);
  process.exit(2);
}

const timestamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const folder = `${timestamp}_${name}`;
const latest = readdirSync(migrationsDir, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort()
  .at(-1);
// The server applies migrations in name order: a new one must sort last.
if (latest !== undefined && folder <= latest) {
  console.error(`${folder} would not sort after the latest migration, ${latest}: is the clock right?`);
  process.exit(1);
}

const diff = diffMigrationsToSchema({ as: 'sql' });
if (diff.empty) {
  console.log('prisma/schema.prisma and prisma/migrations already agree: no migration to write.');
} else {
  const dir = path.join(migrationsDir, folder);
  if (existsSync(dir)) throw new Error(`${dir} exists`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'migration.sql'), `${diff.sql}\n`);
  console.log(
    `wrote prisma/migrations/${folder}/migration.sql:\n\n${diff.sql}\n\n` +
      'Read it (a rename comes out as a drop and an add), then commit it with the schema. The server applies it when it starts.',
  );
}
