import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A PostgreSQL server of the test's own, made with the installed server's `initdb` and `pg_ctl` in a temporary
 * folder, on a port of 55432–55439, trust authentication, loopback only: a test may stop and start it at will.
 * The shared server on 5432 is never touched. As root (initdb refuses root) it runs as the `postgres` user.
 */
const run = promisify(execFile);

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const PORTS = [55432, 55433, 55434, 55435, 55436, 55437, 55438, 55439];

/** Why this machine cannot run one, or undefined when it can. */
export function ownPostgresUnavailable(): string | undefined {
  if (!existsSync(path.join(PG_BIN, 'initdb'))) return `no PostgreSQL server binaries in ${PG_BIN} (set PG_BIN)`;
  return undefined;
}

export interface OwnPostgres {
  url: string;
  port: number;
  /** Stops the server: `fast` ends sessions with an error, `immediate` drops them like a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops it (if running) and deletes its folder. */
  destroy(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

async function pgTool(tool: string, args: string[]): Promise<void> {
  const binary = path.join(PG_BIN, tool);
  if (asRoot) await run('runuser', ['-u', 'postgres', '--', binary, ...args]);
  else await run(binary, args);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const why = ownPostgresUnavailable();
  if (why) throw new Error(why);
  const folder = mkdtempSync(path.join(tmpdir(), 'works-api-own-pg-'));
  const dataDir = path.join(folder, 'data');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(folder, Number(stdout.trim()), Number(gid.trim()));
  }
  await pgTool('initdb', [
    '-D',
    dataDir,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  let port = 0;
  const options = () => `-p ${port} -c listen_addresses=127.0.0.1 -k ${folder} -c fsync=off -c full_page_writes=off`;
  let running = false;
  const server: OwnPostgres = {
    get port() {
      return port;
    },
    get url() {
      return `postgresql://postgres@127.0.0.1:${port}/postgres`;
    },
    async start() {
      await pgTool('pg_ctl', [
        '-D',
        dataDir,
        '-o',
        options(),
        '-l',
        path.join(folder, 'server.log'),
        '-w',
        '-t',
        '30',
        'start',
      ]);
      running = true;
    },
    async stop(mode = 'fast') {
      await pgTool('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await server.stop('immediate').catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    },
  };
  // The first port of the range that is free, and still free when the server binds it (another test run may
  // take it in between: then the next one). Each jest worker looks from a place of its own in the range: a suite
  // stops its server and starts it again on the same port, and a file in the other worker, looking from the same
  // place, took that port while it was down.
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const first = ((worker - 1) * 2) % PORTS.length;
  for (const candidate of [...PORTS.slice(first), ...PORTS.slice(0, first)]) {
    if (!(await portIsFree(candidate))) continue;
    port = candidate;
    try {
      await server.start();
      return server;
    } catch {
      // Taken meanwhile: try the next.
    }
  }
  rmSync(folder, { recursive: true, force: true });
  throw new Error(`no free port in ${PORTS[0]}–${PORTS.at(-1)} for a test PostgreSQL`);
}
