import { startLoad } from '../support/load';
import { databaseEnv, killAll, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';
import { ADMIN_TOKEN, createUserAt } from '../support/server';

/**
 * One Idempotency-Key, one effect, even when the process dies mid-request: keyed creations (tenants, works,
 * requests, batches of requests) from 16 clients, kill -9 while they are in flight, a restart, then every key sent again with its body
 * once the lock time has passed. Every key must then have made exactly one row, and a key whose creation was
 * acknowledged before the kill must replay that creation. The request actions, idempotent by state, go through the
 * same kill: every confirm sent again answers 200 confirmed, and each request has one confirm event. On whichever database the suite runs on (PGlite in a
 * folder, or DATABASE_URL), with `node dist/main.js` as `pnpm start` runs it.
 */
afterAll(removeDataDirs);

const LOCK_TIMEOUT_MS = 1000;
const CLIENTS = 16;

interface KeyedCreation {
  key: string;
  kind: 'tenant' | 'work' | 'request' | 'batch';
  path: string;
  body: string;
  /** The name (or title) that finds its rows again. */
  marker: string;
  /** A batch's: the title of each of its requests (each must be there exactly once). */
  markers?: string[];
  /** The id the server answered with before the kill, if it answered. */
  acknowledgedId?: string;
}

const running: ServerProcess[] = [];
afterAll(() => killAll(running));
async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer({
    ...env,
    ADMIN_TOKEN,
    RATE_LIMIT_PER_MINUTE: '0',
    IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
    MAX_TENANTS_PER_USER: '100000',
    MAX_EMAILS_PER_RECIPIENT_PER_DAY: '100000',
    MAX_EMAILS_PER_TENANT_PER_DAY: '10000000',
    MAX_EMAILS_PER_ADDRESS_PER_DAY: '100000',
    MAX_EMAILS_PER_SENDER_PER_DAY: '10000000',
  });
  running.push(server);
  return server;
}

const idOf = (json: Record<string, { id: string; requests?: Array<{ id: string }> }>): string =>
  (json.tenant ?? json.work ?? json.request ?? json.batch!.requests![0])!.id;

async function send(server: ServerProcess, headers: Record<string, string>, creation: KeyedCreation) {
  const res = await fetch(server.baseUrl + creation.path, {
    method: 'POST',
    headers: { ...headers, 'Idempotency-Key': creation.key },
    body: creation.body,
  });
  const json =
    res.status < 300
      ? ((await res.json()) as Record<string, { id: string; requests?: Array<{ id: string }> }>)
      : undefined;
  return { status: res.status, id: json && idOf(json) };
}

/** Every row of a list, page after page. */
async function listAll(server: ServerProcess, headers: Record<string, string>, path: string, field: string) {
  const rows: Array<{ id: string; name?: string; title?: string }> = [];
  let after: string | null = null;
  do {
    const query = after ? `?limit=100&after=${encodeURIComponent(after)}` : '?limit=100';
    const res = await fetch(server.baseUrl + path + query, { headers });
    expect(res.status).toBe(200);
    const page = ((await res.json()) as Record<string, unknown>)[field] as {
      edges: Array<{ node: { id: string; name?: string; title?: string } }>;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
    rows.push(...page.edges.map((edge) => edge.node));
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  } while (after);
  return rows;
}

describe('keyed creations through kill -9', () => {
  it('leave every key with exactly one effect once it is sent again, and replay what was acknowledged', async () => {
    const env = await databaseEnv();
    let server = await start(env);
    const json = { 'Content-Type': 'application/json' };
    const headers = { ...json, Authorization: `Bearer ${(await createUserAt(server.baseUrl, 'keys')).apiKey}` };
    const setUp = async (path: string, body: string) =>
      idOf((await (await fetch(server.baseUrl + path, { method: 'POST', headers, body })).json()) as never);
    const tenantPath = `/v1/tenants/${await setUp('/v1/tenants', '{"name":"Keyed"}')}`;
    const workPath = `${tenantPath}/works/${await setUp(`${tenantPath}/works`, '{"name":"Keyed work"}')}`;

    const creations: KeyedCreation[] = [];
    const confirms: string[] = [];
    const lastRequest = new Map<number, string>();
    const newCreation = (worker: number, sequence: number): KeyedCreation => {
      const key = `crash-${worker}-${sequence}`;
      const marker = `K ${key}`;
      switch (sequence % 3) {
        case 0:
          return { key, kind: 'tenant', path: '/v1/tenants', body: JSON.stringify({ name: marker }), marker };
        case 1:
          return { key, kind: 'work', path: `${tenantPath}/works`, body: JSON.stringify({ name: marker }), marker };
        default:
          // Every other request is a batch of three (bulk send, issue 41): one key, one batch, all or nothing.
          if (worker % 2 === 1) {
            const markers = [0, 1, 2].map((item) => `${marker} #${item}`);
            return {
              key,
              kind: 'batch',
              path: `${workPath}/request-batches`,
              body: JSON.stringify({
                items: markers.map((title) => ({ title, recipient: { email: `${worker}@example.com` } })),
              }),
              marker,
              markers,
            };
          }
          return {
            key,
            kind: 'request',
            path: `${workPath}/requests`,
            body: JSON.stringify({ title: marker, recipient: { email: `${worker}@example.com` } }),
            marker,
          };
      }
    };
    const load = startLoad(
      CLIENTS,
      async (worker, sequence) => {
        const request = lastRequest.get(worker);
        if (sequence % 4 === 3 && request) {
          // A confirm of this client's last request: idempotent by state, no key.
          lastRequest.delete(worker);
          confirms.push(request);
          try {
            const res = await fetch(`${server.baseUrl}${workPath}/requests/${request}/confirm`, {
              method: 'PUT',
              headers,
              body: '{"answer":"Yes"}',
            });
            return res.status === 200 ? 201 : res.status; // counted with the acknowledged writes
          } catch {
            return 0;
          }
        }
        const creation = newCreation(worker, sequence);
        creations.push(creation);
        try {
          const { status, id } = await send(server, headers, creation);
          if (id) creation.acknowledgedId = id;
          if (id && creation.kind === 'request') lastRequest.set(worker, id);
          return status;
        } catch {
          return 0; // refused or cut off by the kill: not acknowledged
        }
      },
      60_000,
    );
    await load.until((statuses) => statuses.filter((status) => status === 201).length >= 120);
    server.child.kill('SIGKILL');
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const statuses = await load.stop();
    expect(statuses.filter((status) => status >= 300 && status !== 0)).toEqual([]);
    const acknowledged = creations.filter((creation) => creation.acknowledgedId).length;
    console.log(
      `kill -9 with ${creations.length - acknowledged} keyed creations unanswered, ${acknowledged} acknowledged`,
    );

    server = await start(env);
    // Every key again, with its body: a key still held by a request the kill ended is in flight (409) until its
    // lock time has passed, then taken over.
    const retried = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const answers: Array<{ creation: KeyedCreation; status: number; id?: string }> = [];
        for (const creation of creations.filter((_, i) => i % CLIENTS === client)) {
          let answer = await send(server, headers, creation);
          for (let attempt = 0; answer.status === 409 && attempt < 20; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, LOCK_TIMEOUT_MS / 4));
            answer = await send(server, headers, creation);
          }
          answers.push({ creation, ...answer });
        }
        return answers;
      }),
    ).then((lists) => lists.flat());
    expect(retried.filter((answer) => answer.status !== 201)).toEqual([]);
    // An acknowledged creation replays: the same row, not a second one.
    expect(
      retried.filter((answer) => answer.creation.acknowledgedId && answer.id !== answer.creation.acknowledgedId),
    ).toEqual([]);

    const rows = [
      ...(await listAll(server, headers, '/v1/tenants', 'tenants')).map((row) => row.name),
      ...(await listAll(server, headers, `${tenantPath}/works`, 'works')).map((row) => row.name),
      ...(await listAll(server, headers, `${workPath}/requests`, 'requests')).map((row) => row.title),
    ];
    const effects = new Map<string, number>();
    for (const marker of rows) if (marker) effects.set(marker, (effects.get(marker) ?? 0) + 1);
    const markersOf = (creation: KeyedCreation) => creation.markers ?? [creation.marker];
    const twice = creations
      .filter((creation) => markersOf(creation).some((marker) => (effects.get(marker) ?? 0) > 1))
      .map((c) => c.key);
    const none = creations
      .filter((creation) => markersOf(creation).some((marker) => !effects.has(marker)))
      .map((c) => c.key);
    console.log(`${creations.length} keys sent again: ${twice.length} with two effects, ${none.length} with none`);
    expect({ twice, none }).toEqual({ twice: [], none: [] });

    // Every confirm again: 200 and confirmed (applied now, or already before the kill), one confirm event each.
    const confirmed = await Promise.all(
      confirms.map(async (id) => {
        const path = `${workPath}/requests/${id}`;
        const res = await fetch(`${server.baseUrl}${path}/confirm`, {
          method: 'PUT',
          headers,
          body: '{"answer":"Yes"}',
        });
        const body = (await res.json()) as { status?: string; code?: string }; // an action answers with the Request itself
        const events = (await (await fetch(`${server.baseUrl}${path}/events`, { headers })).json()) as {
          events: { edges: Array<{ node: { action: string } }> };
        };
        const confirmEvents = events.events.edges.filter((edge) => edge.node.action === 'confirm').length;
        return { id, status: res.status, state: body.status ?? body.code, confirmEvents };
      }),
    );
    console.log(`${confirms.length} confirms sent again`);
    expect(confirmed.filter((c) => c.status !== 200 || c.state !== 'confirmed' || c.confirmEvents !== 1)).toEqual([]);
  }, 150_000);
});
