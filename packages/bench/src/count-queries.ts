import path from 'node:path';

/**
 * Preloaded into the server (`node -r`) by `pnpm bench -- --count-queries`: counts the statements the pg driver
 * sends (each one a round trip to PostgreSQL, BEGIN and COMMIT included) and hands them over IPC on request.
 * Measurement only; the server itself knows nothing of it.
 */
interface QueryLog {
  count: number;
  statements: string[];
}

const serverDir = path.resolve(__dirname, '../../server');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require(require.resolve('pg', { paths: [serverDir] })) as typeof import('pg');
const log: QueryLog = { count: 0, statements: [] };
// Kept to be called with the client as `this` (below), so it is taken off the prototype unbound on purpose.
// eslint-disable-next-line @typescript-eslint/unbound-method
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;

pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const [config] = args;
  const text = typeof config === 'string' ? config : ((config as { text?: string } | undefined)?.text ?? '?');
  log.count++;
  log.statements.push(text.replace(/\s+/g, ' ').slice(0, 160));
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

process.on('message', (message) => {
  if (message !== 'bench:queries') return;
  process.send?.({ count: log.count, statements: log.statements });
  log.count = 0;
  log.statements = [];
});
