/**
 * `pnpm ha:check`: the server through two failovers of a real PostgreSQL HA cluster (deploy/ha/cluster.sh: Patroni,
 * etcd, HAProxy, three PostgreSQL nodes with synchronous replication), on loopback.
 *
 * It installs what is missing (apt), starts the cluster in a folder of its own, starts the built server on it
 * (`node dist/main.js`, DATABASE_URL to HAProxy), and runs write load with a ledger of acknowledged writes. Each
 * round SIGKILLs the leader's PostgreSQL, waits for the next leader, keeps writing, and waits for the cluster to be
 * whole again. Then it reads every acknowledged write back, counts rows created twice, and waits for the email and
 * the webhook events of every acknowledged request. It exits 0 only when nothing acknowledged is lost, nothing was
 * created twice, no answer was a 500 or anything but a success or a 503, and no answer took longer than the limit.
 * It cleans up after itself (the server, the cluster, its folder), also when it fails or is interrupted.
 *
 * Options (environment): HA_CHECK_ROUNDS (2), HA_CHECK_WORKERS (6), HA_CHECK_PORT (3501), HA_CHECK_KEEP=1 leaves the
 * cluster running (and prints where), HA_CLUSTER_DIR, and cluster.sh's HA_*_PORT(S).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { type Receiver, startReceiver } from '../support/receiver';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink';
import { clusterCommand, healthy, killPostgres, REPO, versions, waitForCluster } from './cluster';
import { type Acknowledged, type Outage, outageAfter, retryable, startWriters } from './writers';

const ROUNDS = Number(process.env.HA_CHECK_ROUNDS ?? 2);
const WORKERS = Number(process.env.HA_CHECK_WORKERS ?? 6);
const PORT = Number(process.env.HA_CHECK_PORT ?? 3501);
const KEEP = process.env.HA_CHECK_KEEP === '1';
/** The whole check stops by itself after this, whatever happens. */
const DEADLINE_MS = 15 * 60_000;
/**
 * The server's statement timeout. No answer may take longer than it plus LATENCY_MARGIN_MS: what PostgreSQL does not
 * time out itself (a commit waiting for a standby) the pool cancels a second later, and cuts two seconds after that.
 */
const STATEMENT_TIMEOUT_MS = 5_000;
const LATENCY_MARGIN_MS = 3_000;
/** The goal: writes are acknowledged again within this of the kill. */
const FAILOVER_GOAL_MS = 30_000;
/** Writing before each kill, and after the cluster is whole again. */
const STEADY_MS = 8_000;
/** How long the outboxes may take to drain after the load: past a 60 s lease, with room. */
const OUTBOX_WAIT_MS = 120_000;
const MAIN = path.join(REPO, 'packages/server/dist/main.js');

const say = (line: string) => console.log(`ha:check: ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString('en-US');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** Starts the built server; every line it writes is also appended to `logFile`. */
async function startServer(env: Record<string, string>, logFile: string): Promise<Server> {
  const child = spawn(process.execPath, ['--max-semi-space-size=4', MAIN], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    appendFileSync(logFile, chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const text of complete.filter(Boolean)) {
        appendFileSync(logFile, `${text}\n`);
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        if (typeof line.url === 'string') resolve();
      }
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });
  await listening;
  return { child, lines, exited };
}

async function json<T>(res: Response | Promise<Response>, expected: number): Promise<T> {
  const answer = await res;
  if (answer.status !== expected) throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as T;
}

/** Reads every acknowledged write back through the server; returns those missing or not as acknowledged. */
async function lost(baseUrl: string, apiKey: string, acknowledged: Acknowledged[]): Promise<string[]> {
  const missing: string[] = [];
  const queue = [...acknowledged];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let ack = queue.pop(); ack; ack = queue.pop()) {
        const res = await fetch(baseUrl + ack.url, { headers: { Authorization: `Bearer ${apiKey}` } });
        const body = res.status === 200 ? ((await res.json()) as { request?: { status: string } }) : undefined;
        if (!body || (ack.kind === 'confirm' && body.request?.status !== 'confirmed'))
          missing.push(`${ack.kind} ${ack.url} → ${res.status}`);
      }
    }),
  );
  return missing;
}

/** Rows created more than once (works by name, requests by recipient), read from the database itself. */
async function duplicated(databaseUrl: string, tenantId: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ key: string; n: number }>(
      `SELECT name AS key, count(*)::int AS n FROM works WHERE tenant_id = $1 GROUP BY name HAVING count(*) > 1
       UNION ALL
       SELECT r.recipient_email, count(*)::int FROM requests r JOIN works w ON w.id = r.work_id
       WHERE w.tenant_id = $1 GROUP BY r.recipient_email HAVING count(*) > 1`,
      [tenantId],
    );
    return rows.flatMap(({ key, n }) => Array.from({ length: n - 1 }, () => key));
  } finally {
    await client.end();
  }
}

/**
 * The outboxes resume by themselves: waits (bounded) until this tenant's mail and webhook queues are empty, then
 * checks that every acknowledged request's email reached the mail server (or was dropped because the request was
 * confirmed before its turn, as designed) and every acknowledged creation and confirmation reached the receiver.
 */
async function outboxesDrained(
  databaseUrl: string,
  tenantId: string,
  acknowledged: Acknowledged[],
  receiver: Receiver,
  smtp: SmtpSink,
) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    const mail = async () =>
      (
        await client.query<{ email: string; status: string }>(
          `SELECT r.recipient_email AS email, m.status::text AS status
           FROM mail_outbox m JOIN requests r ON r.id = m.request_id JOIN works w ON w.id = r.work_id
           WHERE w.tenant_id = $1 AND m.kind = 'request'`,
          [tenantId],
        )
      ).rows;
    const pendingWebhooks = async () =>
      (
        await client.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM webhook_events WHERE tenant_id = $1 AND fanned_out_at IS NULL)
                + (SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending') AS n`,
          [tenantId],
        )
      ).rows[0]!.n;
    // A send cut off by a kill before its outcome was written goes out again once its 60 s lease has run out.
    while (performance.now() - started < OUTBOX_WAIT_MS) {
      if ((await mail()).every((row) => row.status !== 'queued') && Number(await pendingWebhooks()) === 0) break;
      await sleep(500);
    }
    const drainedMs = performance.now() - started;
    // Per recipient (one per request, unless a request was created twice): the rows sent, dropped, and received.
    const tally = (list: string[]) =>
      list.reduce((map, key) => map.set(key, (map.get(key) ?? 0) + 1), new Map<string, number>());
    const rows = await mail();
    const sentRows = tally(rows.filter((row) => row.status === 'sent').map((row) => row.email));
    const dropped = new Set(rows.filter((row) => row.status === 'dropped').map((row) => row.email));
    const received = tally(smtp.received.flatMap((m) => m.to));
    const events = receiver.received.map(
      (r) => JSON.parse(r.body) as { id: string; type: string; data: { request?: { id: string } } },
    );
    const ids = (type: string) => new Set(events.filter((e) => e.type === type).map((e) => e.data.request?.id));
    const created = ids('request.created');
    const confirmed = ids('request.confirmed');
    const requests = acknowledged.filter((a) => a.kind === 'request');
    return {
      drainedMs,
      events: events.length,
      eventsTwice: events.length - new Set(events.map((e) => e.id)).size,
      undelivered:
        requests.filter((r) => !created.has(r.id)).length +
        acknowledged.filter((a) => a.kind === 'confirm' && !confirmed.has(a.id)).length,
      sent: smtp.received.length,
      dropped: requests.filter((r) => dropped.has(r.key)).length,
      unmailed: requests.filter((r) => !dropped.has(r.key) && !received.has(r.key)).length,
      mailTwice: [...received].reduce((extra, [to, n]) => extra + Math.max(0, n - (sentRows.get(to) ?? 0)), 0),
    };
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  const started = performance.now();
  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error) => say(String(error)));
  };
  const watchdog = setTimeout(() => {
    say(`still running after ${DEADLINE_MS / 60_000} min: giving up`);
    void cleanUp().finally(() => process.exit(2));
  }, DEADLINE_MS);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      say(`${signal}: cleaning up`);
      void cleanUp().finally(() => process.exit(130));
    });

  // The server's log and, when the check fails, the cluster's logs: kept for a look afterwards.
  const logs = mkdtempSync(path.join(tmpdir(), 'works-api-ha-check-logs-'));
  let failed = true;
  try {
    await clusterCommand('', 'install');
    say(await versions());
    const dir = process.env.HA_CLUSTER_DIR ?? mkdtempSync(path.join(tmpdir(), 'works-api-ha-'));
    cleanups.push(async () => {
      if (KEEP) return say(`cluster left running in ${dir} (HA_CLUSTER_DIR=${dir} deploy/ha/cluster.sh stop --purge)`);
      if (failed) cpSync(path.join(dir, 'log'), path.join(logs, 'cluster'), { recursive: true });
      await clusterCommand(dir, 'stop', '--purge');
      rmSync(dir, { recursive: true, force: true });
    });
    const clusterStarted = performance.now();
    const databaseUrl = /^DATABASE_URL=(.+)$/m.exec(await clusterCommand(dir, 'start'))![1]!;
    say(`cluster up in ${seconds(performance.now() - clusterStarted)}`);

    const smtp = await startSmtpSink();
    cleanups.push(() => smtp.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const adminToken = randomBytes(24).toString('hex');
    const server = await startServer(
      {
        DATABASE_URL: databaseUrl,
        ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
        HOST: '127.0.0.1',
        PORT: String(PORT),
        ADMIN_TOKEN: adminToken,
        RATE_LIMIT_PER_MINUTE: '0',
        // Thousands of requests in a few tenants within a day: what is checked is the failover, not the email caps.
        MAX_EMAILS_PER_TENANT_PER_DAY: '10000000',
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        // One SMTP connection per email by default; a pool, as a busy production sender would use.
        SMTP_URL: `${smtp.url}?pool=true`,
        MAIL_FROM: 'works@example.com',
        PUBLIC_URL: `http://127.0.0.1:${PORT}`,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      },
      path.join(logs, 'server.log'),
    );
    cleanups.push(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await server.exited;
    });
    const baseUrl = `http://127.0.0.1:${PORT}`;
    say(`server on ${baseUrl}, DATABASE_URL to HAProxy (${new URL(databaseUrl).host})`);

    const { user, apiKey } = await json<{ user: { id: string }; apiKey: { secret: string } }>(
      fetch(`${baseUrl}/v1/admin/users`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'ha-check@example.com', firstName: 'HA', lastName: 'Check' }),
      }),
      201,
    ).then((body) => ({ user: body.user, apiKey: body.apiKey.secret }));
    const auth = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
    const { tenant } = await json<{ tenant: { id: string } }>(
      fetch(`${baseUrl}/v1/tenants`, { method: 'POST', headers: auth, body: '{"name":"HA check"}' }),
      201,
    );
    await json(
      fetch(`${baseUrl}/v1/tenants/${tenant.id}/webhook-endpoints`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ url: receiver.url }),
      }),
      201,
    );
    say(`user ${user.id}, tenant ${tenant.id}; ${WORKERS} writers`);

    const writers = startWriters(baseUrl, apiKey, tenant.id, { workers: WORKERS, maxMs: DEADLINE_MS });
    const outages: Outage[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await sleep(STEADY_MS);
      const before = writers.acknowledged.length;
      const leader = (await waitForCluster(healthy, 60_000, 'a whole cluster')).find((m) => m.role === 'leader')!;
      const killedAt = performance.now();
      const pid = killPostgres(dir, leader.name);
      say(
        `round ${round}: ${count(before)} writes acknowledged so far; SIGKILL ${leader.name}'s PostgreSQL (pid ${pid})`,
      );
      const next = await waitForCluster(
        (list) => list.some((m) => m.role === 'leader' && m.name !== leader.name && m.state === 'running'),
        60_000,
        'a new leader',
      );
      const newLeader = next.find((m) => m.role === 'leader')!;
      say(
        `round ${round}: ${newLeader.name} leads (timeline ${newLeader.timeline}) ${seconds(performance.now() - killedAt)} after the kill`,
      );
      await waitForCluster(healthy, 120_000, 'the cluster whole again (the old leader back as a standby)');
      say(`round ${round}: cluster whole again ${seconds(performance.now() - killedAt)} after the kill`);
      const deadline = performance.now() + 60_000;
      let outage = outageAfter(writers.attempts, killedAt);
      while (!outage && performance.now() < deadline) {
        await sleep(200);
        outage = outageAfter(writers.attempts, killedAt);
      }
      if (!outage) throw new Error(`round ${round}: no write acknowledged in the minute after the kill`);
      outages.push(outage);
      say(
        `round ${round}: no write acknowledged for ${seconds(outage.withoutWritesMs)} after the kill; ` +
          `${count(outage.refused)} attempts answered 503 (or cut off) over ${seconds(outage.refusedForMs)}`,
      );
    }
    await sleep(STEADY_MS);
    await writers.load.stop();
    const { acknowledged, attempts } = writers;
    say(`load stopped: ${count(attempts.length)} attempts, ${count(acknowledged.length)} writes acknowledged`);

    const missing = await lost(baseUrl, apiKey, acknowledged);
    const twice = await duplicated(databaseUrl, tenant.id);
    const statuses = new Map<string, number>();
    for (const a of attempts) {
      const key = a.status === 0 ? 'no answer' : `${a.status}${a.code ? ` ${a.code}` : ''}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    say(`answers: ${[...statuses].map(([status, n]) => `${status} × ${count(n)}`).join(', ')}`);
    const unavailable = attempts.filter((a) => a.status === 503);
    const withoutRetryAfter = unavailable.filter((a) => a.retryAfter === null).length;
    const others = attempts.filter((a) => !(a.status >= 200 && a.status < 300) && !retryable(a));
    const internalErrors = server.lines.filter((line) => line.msg === 'internal error');
    const slowest = attempts.reduce((max, a) => Math.max(max, a.endedAt - a.sentAt), 0);
    say(
      `slowest answer ${seconds(slowest)} (statement timeout ${seconds(STATEMENT_TIMEOUT_MS)}, limit ${seconds(STATEMENT_TIMEOUT_MS + LATENCY_MARGIN_MS)})`,
    );
    if (missing.length) say(`lost: ${missing.slice(0, 10).join('; ')}${missing.length > 10 ? '; …' : ''}`);
    // A creation whose commit reached the standby but whose answer was lost with the leader was answered 503; its
    // retry with the same key runs again, since the key's outcome is written apart from the creation.
    if (twice.length) say(`created twice: ${twice.slice(0, 10).join(', ')}`);
    if (internalErrors.length)
      say(`the server logged ${internalErrors.length} internal errors: ${JSON.stringify(internalErrors[0])}`);

    const outbox = await outboxesDrained(databaseUrl, tenant.id, acknowledged, receiver, smtp);
    say(
      `webhooks: ${count(outbox.events)} events received, ${outbox.undelivered} of the acknowledged writes' missing, ` +
        `${outbox.eventsTwice} received twice; mail: ${count(outbox.sent)} emails sent, ${outbox.dropped} dropped ` +
        `(confirmed first), ${outbox.unmailed} missing, ${outbox.mailTwice} sent twice; drained ` +
        `${seconds(outbox.drainedMs)} after the load stopped`,
    );

    server.child.kill('SIGTERM');
    const exitCode = await server.exited;
    say(`server stopped with exit code ${exitCode}; ${seconds(performance.now() - started)} in all`);
    const failures = [
      missing.length && `${missing.length} acknowledged writes lost`,
      twice.length && `${twice.length} rows created twice`,
      others.length && `${others.length} answers neither a success nor one to retry (503)`,
      internalErrors.length && `${internalErrors.length} internal errors logged`,
      withoutRetryAfter && `${withoutRetryAfter} 503s without Retry-After`,
      slowest > STATEMENT_TIMEOUT_MS + LATENCY_MARGIN_MS && `an answer took ${seconds(slowest)}`,
      outages.some((o) => o.withoutWritesMs > FAILOVER_GOAL_MS) &&
        `a failover left writes refused for over ${seconds(FAILOVER_GOAL_MS)}`,
      outbox.undelivered && `${outbox.undelivered} webhook events never delivered`,
      outbox.unmailed && `${outbox.unmailed} emails never sent`,
      exitCode !== 0 && `the server exited with ${exitCode}`,
    ].filter(Boolean);
    failed = failures.length > 0;
    await cleanUp();
    for (const failure of failures) say(`FAILED: ${failure}`);
    console.log(
      `failover: 503 for ${outages.map((o) => seconds(o.refusedForMs)).join(' and ')}, ` +
        `${count(acknowledged.length)} writes acknowledged, ${count(missing.length)} lost, ` +
        `${count(twice.length)} duplicated, ${count(others.length)} other errors`,
    );
    return failures.length === 0 ? 0 : 1;
  } catch (error) {
    say(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
    await cleanUp();
    return 1;
  } finally {
    clearTimeout(watchdog);
    if (failed) say(`logs kept in ${logs}`);
    else rmSync(logs, { recursive: true, force: true });
  }
}

void main().then((code) => process.exit(code));
