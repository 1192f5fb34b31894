// `pnpm check:drift`: fails when prisma/schema.prisma and prisma/migrations disagree, i.e. when the database the
// migrations create (applied by our migrator, as the server does) is not the one the schema describes.
import { diffMigrationsToSchema } from './migrations.mjs';

const started = Date.now();
const drift = diffMigrationsToSchema();
if (drift.empty) {
  console.log(`prisma/schema.prisma and prisma/migrations agree (${((Date.now() - started) / 1000).toFixed(1)} s)`);
} else {
  console.error(
    'prisma/schema.prisma and prisma/migrations disagree. What it takes to bring the migrated database to the schema:\n\n' +
      `${drift.summary}\n\nWrite the missing migration with \`pnpm db:migration <what_changed>\` (see docs/development.md), ` +
      'or, if a migration is what changed, make the schema match it.',
  );
  process.exitCode = 1;
}
