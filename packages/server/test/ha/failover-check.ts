/**
 * `pnpm ha:check`: the server through failovers of a real PostgreSQL HA cluster (deploy/ha/cluster.sh: Patroni, etcd,
 * HAProxy, three PostgreSQL nodes with synchronous replication), on loopback.
 *
 * It installs what is missing (apt), starts the cluster in a folder of its own, tries its doors without credentials
 * (exposure.ts), starts the built server on it (`node dist/main.js`, DATABASE_URL to HAProxy), and runs write load
 * with a ledger of acknowledged writes. Each round hits the leader (rounds.ts: its PostgreSQL killed, its machine
 * lost, the node frozen past the TTL then continued, the node paused under the TTL), keeps writing, and waits for the
 * cluster to be whole again. Then it reads every acknowledged write back, counts rows created twice (per round too),
 * and waits for the email and the webhook events of every acknowledged request. It exits 0 only when nothing
 * acknowledged is lost, nothing was created twice, no answer was a 500 or anything but a success or a 503, no answer
 * took longer than the limit, no door opened without credentials and no secret showed on a command line. It cleans
 * up after itself (the server, the cluster, its folder), also when it fails or is interrupted.
 *
 * Options (environment): HA_CHECK_ROUNDS ("kill machine freeze pause": the rounds, in order), HA_CHECK_WORKERS (6),
 * HA_CHECK_PORT (3501), HA_CHECK_KEEP=1 leaves the cluster running (and prints where), HA_CLUSTER_DIR, and
 * cluster.sh's HA_*_PORT(S).
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startReceiver } from '../support/receiver';
import { startSmtpSink } from '../support/smtp-sink';
import { clusterCommand, timing, versions } from './cluster';
import { openDoors, watchCommandLines } from './exposure';
import { parseRounds, type Round, type RoundKind, runRound, thaw } from './rounds';
import { json, startServer } from './server';
import { duplicated, lost, outboxesDrained } from './verify';
import { type Acknowledged, retryable, startWriters } from './writers';

const ROUNDS = parseRounds(process.env.HA_CHECK_ROUNDS ?? 'kill machine freeze pause');
const WORKERS = Number(process.env.HA_CHECK_WORKERS ?? 6);
const PORT = Number(process.env.HA_CHECK_PORT ?? 3501);
const KEEP = process.env.HA_CHECK_KEEP === '1';
/** The whole check stops by itself after this, whatever happens. */
const DEADLINE_MS = 25 * 60_000;
/**
 * The server's statement timeout. No answer may take longer than it plus LATENCY_MARGIN_MS: what PostgreSQL does not
 * time out itself (a commit waiting for a standby) the pool cancels a second later, and cuts two seconds after that.
 */
const STATEMENT_TIMEOUT_MS = 5_000;
const LATENCY_MARGIN_MS = 3_000;
/** The goal when the leader's PostgreSQL crashes: writes are acknowledged again within this of the kill. */
const FAILOVER_GOAL_MS = 30_000;
/** Writing before each round, and after the last one. */
const STEADY_MS = 8_000;

const say = (line: string) => console.log(`ha:check: ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString('en-US');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Names for the report's last line. */
const OUTCOME: Record<RoundKind, string> = {
  kill: 'killed PostgreSQL',
  machine: 'lost machine',
  freeze: 'frozen leader',
  pause: 'paused leader',
};

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
    const commandLines = watchCommandLines(dir);
    cleanups.push(async () => commandLines.stop());
    const doors = await openDoors(dir);
    say(
      doors.length
        ? `open without credentials: ${doors.join('; ')}`
        : 'every door asks for credentials (PostgreSQL, etcd v2 and v3, Patroni, HAProxy stats)',
    );

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
        // ...sent by one user: their budget across tenants neither.
        MAX_EMAILS_PER_SENDER_PER_DAY: '10000000',
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
    say(`user ${user.id}, tenant ${tenant.id}; ${WORKERS} writers; rounds: ${ROUNDS.join(', ')}`);

    const writers = startWriters(baseUrl, apiKey, tenant.id, { workers: WORKERS, maxMs: DEADLINE_MS });
    const { ttlMs, loopWaitMs } = await timing();
    const frozen = new Set<number>();
    cleanups.push(async () => thaw({ frozen }));
    const rounds: Round[] = [];
    for (const [index, kind] of ROUNDS.entries()) {
      await sleep(STEADY_MS);
      rounds.push(await runRound(kind, index + 1, { dir, writers, ttlMs, loopWaitMs, say, frozen }));
    }
    await sleep(STEADY_MS);
    await writers.load.stop();
    const { acknowledged, attempts } = writers;
    say(`load stopped: ${count(attempts.length)} attempts, ${count(acknowledged.length)} writes acknowledged`);
    const onCommandLines = commandLines.stop();

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
    if (missing.length)
      say(
        `lost: ${missing
          .slice(0, 10)
          .map((m) => `${m.ack.kind} ${m.ack.url} → ${m.status}`)
          .join('; ')}${missing.length > 10 ? '; …' : ''}`,
      );
    // A creation whose commit reached the standby but whose answer was lost with the leader was answered 503; its
    // retry with the same key replays the stored outcome, since the key's outcome is written with the creation.
    if (twice.length) say(`created twice: ${twice.slice(0, 10).join(', ')}`);
    if (internalErrors.length)
      say(`the server logged ${internalErrors.length} internal errors: ${JSON.stringify(internalErrors[0])}`);
    for (const line of onCommandLines) say(`a secret on a command line: ${line}`);

    // Each round owns the writes acknowledged from its blow until the next round's (or the end of the load).
    const roundOf = (ack: Acknowledged) => rounds.findLast((r) => r.hitAt <= ack.at);
    const byKey = new Map(acknowledged.map((a) => [a.key, a]));
    const tally = rounds.map((round) => ({
      round,
      acknowledged: acknowledged.filter((a) => roundOf(a) === round).length,
      lost: missing.filter((m) => roundOf(m.ack) === round).length,
      duplicated: twice.filter((key) => byKey.has(key) && roundOf(byKey.get(key)!) === round).length,
    }));
    for (const t of tally)
      say(
        `${t.round.label}: ${count(t.acknowledged)} writes acknowledged from the blow to the next round, ${count(t.lost)} lost, ${count(t.duplicated)} duplicated`,
      );

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
      ...doors.map((door) => `open without credentials: ${door}`),
      onCommandLines.length && `${onCommandLines.length} secrets seen on command lines`,
      missing.length && `${missing.length} acknowledged writes lost`,
      twice.length && `${twice.length} rows created twice`,
      others.length && `${others.length} answers neither a success nor one to retry (503)`,
      internalErrors.length && `${internalErrors.length} internal errors logged`,
      withoutRetryAfter && `${withoutRetryAfter} 503s without Retry-After`,
      slowest > STATEMENT_TIMEOUT_MS + LATENCY_MARGIN_MS && `an answer took ${seconds(slowest)}`,
      rounds.some((r) => r.kind === 'kill' && r.outage.withoutWritesMs > FAILOVER_GOAL_MS) &&
        `a crash left writes refused for over ${seconds(FAILOVER_GOAL_MS)}`,
      outbox.undelivered && `${outbox.undelivered} webhook events never delivered`,
      outbox.unmailed && `${outbox.unmailed} emails never sent`,
      exitCode !== 0 && `the server exited with ${exitCode}`,
    ].filter(Boolean);
    failed = failures.length > 0;
    await cleanUp();
    for (const failure of failures) say(`FAILED: ${failure}`);
    // One figure per kind of round (summed when a kind ran more than once), for the last line.
    const perKind = [...new Set(ROUNDS)].map((kind) => {
      const mine = tally.filter((t) => t.round.kind === kind);
      const sum = (key: 'acknowledged' | 'lost' | 'duplicated') => count(mine.reduce((n, t) => n + t[key], 0));
      return `${OUTCOME[kind]}: ${sum('acknowledged')} acknowledged, ${sum('lost')} lost, ${sum('duplicated')} duplicated`;
    });
    console.log(
      `failover: 503 for ${rounds.map((r) => `${seconds(r.outage.refusedForMs)} (${r.label})`).join(', ')}; ` +
        `${count(acknowledged.length)} writes acknowledged, ${count(missing.length)} lost, ` +
        `${count(twice.length)} duplicated, ${count(others.length)} other errors; ${perKind.join('; ')}`,
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
