import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, unwrap, type WorksApiClient } from '@works-api/client';

const serverMain = path.resolve(__dirname, '../../../server/dist/main.js');
const ADMIN_TOKEN = 'console-e2e-admin-token-0123456789';

export interface TestUser {
  email: string;
  firstName: string;
  apiKey: string;
  api: WorksApiClient;
}

export interface RunningServer {
  baseUrl: string;
  /** A new user with an API key, through the operator route. */
  createUser(firstName: string): Promise<TestUser>;
  /** Every log line the server wrote, to check that no key ever appears in them. */
  output(): string;
  stop(): Promise<void>;
}

const usersByName = new Map<string, number>();

/**
 * On a fresh PGlite the first Ada is ada@example.com (screenshots worth showing), the next ada.2@example.com;
 * on a shared PostgreSQL the address is made unique across runs too.
 */
function emailFor(firstName: string): string {
  const name = firstName.toLowerCase();
  const count = (usersByName.get(name) ?? 0) + 1;
  usersByName.set(name, count);
  const local = count === 1 ? name : `${name}.${count}`;
  return process.env.DATABASE_URL ? `${local}-${process.pid}-${Date.now()}@example.com` : `${local}@example.com`;
}

/**
 * The real server, built (`node packages/server/dist/main.js`, as `pnpm start` runs it, serving the console's
 * build at /console) on a random loopback port, on a fresh PGlite folder (or on DATABASE_URL when it is set, like
 * the server's own tests).
 */
const lastNames: Record<string, string> = { Ada: 'Lovelace', Grace: 'Hopper' };

/** A port free on loopback right now: the server must know its own address before it listens (PUBLIC_URL). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** `env`: more of the server's environment (e.g. SMTP_URL), over the defaults below. */
export async function startServer(env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'works-console-e2e-'));
  const port = await freePort();
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    // The recipients' answer links point here; without SMTP_URL the emails go to the dev mailbox, which is on by
    // default on PGlite and asked for on PostgreSQL (there it is off unless DEV_MAILBOX=true).
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...(!env.SMTP_URL && { DEV_MAILBOX: 'true' }),
    PGLITE_DIR: path.join(dataDir, 'pglite'),
    ADMIN_TOKEN,
    // Every test signs in by email (the link from the log, as the README's newcomer does): many sign-ins of the
    // same people from one address in a few minutes, which the per-address and per-client caps would refuse
    // (the server's own suite tests the caps). SIGNUP=open, as on a developer's machine by default.
    SIGN_IN_EMAILS_PER_ADDRESS_PER_HOUR: '1000',
    SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR: '0',
    SIGNUP: 'open',
    LOG_LEVEL: 'info',
    WEB_CONCURRENCY: '1',
  };
  delete environment.SMTP_URL;
  if (env.SMTP_URL) delete environment.DEV_MAILBOX;
  const child: ChildProcess = spawn(process.execPath, [serverMain], {
    env: { ...environment, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/v1"/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return {
    baseUrl,
    async createUser(firstName) {
      const admin = createClient({ baseUrl, apiKey: ADMIN_TOKEN, retry: false });
      const email = emailFor(firstName);
      const { apiKey } = unwrap(
        await admin.adminCreateUser({ body: { email, firstName, lastName: lastNames[firstName] ?? 'Tester' } }),
      );
      return {
        email,
        firstName,
        apiKey: apiKey.secret,
        api: createClient({ baseUrl, apiKey: apiKey.secret, retry: false }),
      };
    },
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
