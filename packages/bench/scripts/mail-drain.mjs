// The mail sender's cost per email, for one build: N requests are created with the sender off, their emails held,
// then a server with the sender on (dev mailbox) sends them all; printed per email: transactions (pg_stat_database),
// the server's CPU and its PostgreSQL backends' CPU (/proc), and the requests rows' HOT updates. Linux only; it
// EMPTIES the database of BENCH_DATABASE_URL (its name must contain "bench"). Run builds in turn (A/B):
//   BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/x_bench node packages/bench/scripts/mail-drain.mjs \
//     <server dist/main.js> 1500 <label>       (FILLFACTOR=85 sets the requests table's before the creates)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Client } = require('pg');
const [main, nArg, label] = process.argv.slice(2);
const N = Number(nArg);
const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/works_bench';
const DB = decodeURIComponent(new URL(URL_).pathname.slice(1));
if (!/bench/i.test(DB)) throw new Error(`${DB}: the database is emptied, so its name must contain "bench"`);
const ADMIN = 'drain-admin-token-0123456789abcdef';
const KEYS = Buffer.from('works-api benchmark key, not secret').subarray(0, 32).toString('base64');
const TICK = 100; // clock ticks per second
const cpuOf = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
  } catch {
    return 0;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let port = 41000 + Math.floor(Math.random() * 1000);
async function start(env) {
  port++;
  const child = spawn(process.execPath, ['--max-semi-space-size=4', main], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL: URL_,
      ADMIN_TOKEN: ADMIN,
      ENCRYPTION_KEYS: KEYS,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_EMAILS_PER_RECIPIENT_PER_DAY: '100000',
      MAX_EMAILS_PER_TENANT_PER_DAY: '10000000',
      MAX_EMAILS_PER_ADDRESS_PER_DAY: '100000',
      MAX_EMAILS_PER_SENDER_PER_DAY: '10000000',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`);
      break;
    } catch {
      await sleep(100);
    }
  }
  return child;
}
const stop = async (child) => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
};
const api = async (path, body, key) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const pg = new Client({ connectionString: URL_ });
await pg.connect();
await pg.query('DROP SCHEMA IF EXISTS public CASCADE');
await pg.query('CREATE SCHEMA public');
let server = await start({ MAIL_SENDER: 'false' });
if (process.env.FILLFACTOR) await pg.query(`ALTER TABLE requests SET (fillfactor = ${Number(process.env.FILLFACTOR)})`);
const user = await api(
  '/v1/admin/users',
  { email: `drain-${Date.now()}@example.com`, firstName: 'Ada', lastName: 'Lovelace' },
  ADMIN,
);
const key = user.apiKey.secret;
const { tenant } = await api('/v1/tenants', { name: 'Drain Inc' }, key);
const { work } = await api(`/v1/tenants/${tenant.id}/works`, { name: 'Drain work' }, key);
let made = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (made < N) {
      const i = made++;
      await api(
        `/v1/tenants/${tenant.id}/works/${work.id}/requests`,
        {
          title: 'Confirm the Q3 figures',
          message: 'Please confirm the figures in section 3.',
          recipient: { email: `grace.${i}.${Date.now()}@example.com`, firstName: 'Grace', lastName: 'Hopper' },
        },
        key,
      );
    }
  }),
);
await stop(server);
await pg.query(`UPDATE mail_outbox SET next_attempt_at = now() + interval '1 hour'`);
await pg.query('SELECT pg_stat_reset()');
server = await start({ MAIL_SENDER: 'true', DEV_MAILBOX: 'true', MAIL_POLL_INTERVAL_MS: '1000' });
await sleep(2500);
const backends = async () =>
  (await pg.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [DB])).rows.map(
    (r) => r.pid,
  );
const before = new Map((await backends()).map((pid) => [pid, cpuOf(pid)]));
const xacts = async () =>
  Number(
    (await pg.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1`, [DB])).rows[0]
      .n,
  );
const xactsBefore = await xacts();
let mine = 1;
const nodeBefore = cpuOf(server.pid);
const t0 = Date.now();
await pg.query(`UPDATE mail_outbox SET next_attempt_at = now()`);
for (;;) {
  const {
    rows: [r],
  } = await pg.query(`SELECT count(*)::int AS n FROM mail_outbox WHERE status = 'queued'`);
  mine++;
  if (r.n === 0) break;
  await sleep(50);
}
const wall = Date.now() - t0;
const nodeMs = cpuOf(server.pid) - nodeBefore;
let pgMs = 0;
for (const pid of await backends()) pgMs += cpuOf(pid) - (before.get(pid) ?? 0);
await sleep(1500);
const statements = (await xacts()) - xactsBefore - mine - 1;
const {
  rows: [st],
} = await pg.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'requests'`);
const {
  rows: [size],
} = await pg.query(
  `SELECT avg(pg_column_size(r.*))::int AS row_bytes, pg_relation_size('requests') / 8192 AS pages, (SELECT count(*) FROM requests)::int AS n FROM requests r`,
);
const {
  rows: [sent],
} = await pg.query(
  `SELECT count(*) FILTER (WHERE status = 'sent')::int AS sent, count(*)::int AS all FROM mail_outbox`,
);
await stop(server);
await pg.end();
console.log(
  JSON.stringify({
    label,
    N,
    sent: sent.sent,
    wallMs: wall,
    transactionsPerEmail: +(statements / N).toFixed(2),
    nodeCpuMsPerEmail: +(nodeMs / N).toFixed(3),
    pgCpuMsPerEmail: +(pgMs / N).toFixed(3),
    requestsUpd: st.n_tup_upd,
    requestsHotUpd: st.n_tup_hot_upd,
    fillfactor: process.env.FILLFACTOR ?? 100,
    rowBytes: size.row_bytes,
    pages: size.pages,
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  }),
);
