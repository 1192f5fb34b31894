import { startLoad } from '../support/load';
import { databaseEnv, killAll, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';
import { ADMIN_TOKEN, createUserAt } from '../support/server';

/**
 * Every write the server acknowledged survives the server's end: kill -9 under concurrent writes (then a restart
 * that must find everything), and SIGTERM under load (requests in flight finish; it exits 0; nothing
 * acknowledged is lost; no request gets a 5xx). Writes: tenants, works, requests, and confirm actions. On whichever database the suite runs on (PGlite in a
 * folder, or DATABASE_URL), with `node dist/main.js` as `pnpm start` runs it.
 */
afterAll(removeDataDirs);

interface Ack {
  kind: 'tenant' | 'work' | 'request' | 'confirm';
  url: string;
}
interface Outcome {
  status: number;
  ack?: Ack;
}

const running: ServerProcess[] = [];
afterAll(() => killAll(running));
async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer({ ...env, ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0' });
  running.push(server);
  return server;
}

async function setUp(server: ServerProcess) {
  const json = { 'Content-Type': 'application/json' };
  const headers = { ...json, Authorization: `Bearer ${(await createUserAt(server.baseUrl, 'writes')).apiKey}` };
  const tenant = (
    (await (
      await fetch(`${server.baseUrl}/v1/tenants`, { method: 'POST', headers, body: '{"name":"Writes"}' })
    ).json()) as { tenant: { id: string } }
  ).tenant;
  return { headers, tenantPath: `/v1/tenants/${tenant.id}` };
}

/**
 * Writers that each create a tenant, a work, a request, and confirm it, over and over, against whatever server
 * `target()` names; each write the server answered with success is recorded with the URL to read it back.
 */
function writers(target: () => ServerProcess, headers: Record<string, string>, tenantPath: string) {
  const state = new Map<number, { work?: string; request?: string }>();
  return startLoad<Outcome>(
    6,
    async (worker, sequence) => {
      const base = target().baseUrl;
      const mine = state.get(worker) ?? {};
      state.set(worker, mine);
      const send = async (kind: Ack['kind'], path: string, method: string, body?: string): Promise<Outcome> => {
        try {
          const res = await fetch(base + path, { method, headers, body });
          if (res.status >= 300) return { status: res.status };
          const json = (await res.json()) as Record<string, { id?: string }> & { id?: string };
          const id = (json.tenant ?? json.work ?? json.request ?? json).id!;
          const url =
            kind === 'tenant'
              ? `/v1/tenants/${id}`
              : kind === 'work'
                ? `${tenantPath}/works/${id}`
                : kind === 'request'
                  ? `${tenantPath}/works/${mine.work}/requests/${id}`
                  : path.replace(/\/confirm$/, '');
          if (kind === 'work') mine.work = id;
          if (kind === 'request') mine.request = id;
          return { status: res.status, ack: { kind, url } };
        } catch {
          return { status: 0 }; // refused or cut off: not acknowledged
        }
      };
      switch (sequence % 4) {
        case 0:
          return send('tenant', '/v1/tenants', 'POST', JSON.stringify({ name: `T ${worker}-${sequence}` }));
        case 1:
          return send('work', `${tenantPath}/works`, 'POST', JSON.stringify({ name: `W ${worker}-${sequence}` }));
        case 2:
          return mine.work
            ? send(
                'request',
                `${tenantPath}/works/${mine.work}/requests`,
                'POST',
                '{"title":"R","recipient":{"email":"r@example.com"}}',
              )
            : { status: 0 };
        default:
          return mine.request
            ? send('confirm', `${tenantPath}/works/${mine.work}/requests/${mine.request}/confirm`, 'PUT')
            : { status: 0 };
      }
    },
    60_000,
  );
}

/** Reads every acknowledged write back from `server`; returns those missing or not as acknowledged. */
async function missing(server: ServerProcess, headers: Record<string, string>, acks: Ack[]): Promise<string[]> {
  const lost: string[] = [];
  for (const ack of acks) {
    const res = await fetch(server.baseUrl + ack.url, { headers });
    const body = res.status === 200 ? ((await res.json()) as { request?: { status: string } }) : undefined;
    if (!body || (ack.kind === 'confirm' && body.request?.status !== 'confirmed'))
      lost.push(`${ack.kind} ${ack.url} → ${res.status}`);
  }
  return lost;
}

const acknowledged = (outcomes: readonly Outcome[]) =>
  outcomes.flatMap((outcome) => (outcome.ack ? [outcome.ack] : []));

const KILL_ROUNDS = Number(process.env.FAULT_ROUNDS ?? 1);

describe('acknowledged writes', () => {
  // One server's life: writes, kill -9 (FAULT_ROUNDS times, 1 by default), a restart that must find every
  // acknowledged write, then writes and SIGTERM, and a restart that must find them all again.
  it(`survive kill -9 under concurrent writes (${KILL_ROUNDS}×) and SIGTERM under load; SIGTERM cuts nothing off and exits 0`, async () => {
    const env = await databaseEnv();
    let server = await start({ ...env, SHUTDOWN_TIMEOUT_MS: '20000' });
    const { headers, tenantPath } = await setUp(server);
    const acks: Ack[] = [];
    for (let round = 1; round <= KILL_ROUNDS; round++) {
      const load = writers(() => server, headers, tenantPath);
      await load.until((outcomes) => acknowledged(outcomes).length >= 60);
      server.child.kill('SIGKILL');
      expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const outcomes = await load.stop();
      expect(outcomes.filter((o) => o.status >= 500)).toEqual([]);
      acks.push(...acknowledged(outcomes));
      console.log(`kill -9, round ${round}: ${acknowledged(outcomes).length} writes acknowledged before the kill`);
      server = await start({ ...env, SHUTDOWN_TIMEOUT_MS: '20000' });
      expect(await missing(server, headers, acks)).toEqual([]);
    }

    const load = writers(() => server, headers, tenantPath);
    await load.until((outcomes) => acknowledged(outcomes).length >= 40);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const outcomes = await load.stop();
    // Nothing was cut off half-way: every answer is a success, else the connection was refused (listener closed).
    expect(outcomes.filter((o) => o.status !== 0 && o.status >= 300)).toEqual([]);
    expect(server.lines.some((line) => line.msg === 'requests still in flight were cut off')).toBe(false);
    acks.push(...acknowledged(outcomes));
    console.log(`SIGTERM under load: ${acknowledged(outcomes).length} writes acknowledged; ${acks.length} in all`);
    const next = await start(env);
    expect(await missing(next, headers, acks)).toEqual([]);
  }, 150_000);
});
