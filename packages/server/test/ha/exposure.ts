import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { Client } from 'pg';

/**
 * The recipe's doors, tried as any local user could (issue 42's finding: the loopback cluster trusted every local
 * user): PostgreSQL without a password, on its socket and over TCP; etcd without a client certificate, and with
 * HAProxy's (which may read the leader key and nothing else); Patroni's REST API and HAProxy's stats page without
 * credentials. And every process's command line, sampled through the run, must never show one of the cluster's
 * secrets (/proc/<pid>/cmdline is readable by every local user).
 */

const PG_PORT = Number((process.env.HA_PG_PORTS ?? '5441 5442 5443').split(' ')[0]);
const REST_PORT = Number((process.env.HA_REST_PORTS ?? '8011 8012 8013').split(' ')[0]);
const ETCD_PORT = Number((process.env.HA_ETCD_PORTS ?? '2389 2390').split(' ')[0]);
const STATS_PORT = Number(process.env.HA_STATS_PORT ?? 5451);

/** An HTTPS request to etcd trusting the cluster's CA, as the client certificate `as` if given; its status. */
function etcd(dir: string, method: string, endpoint: string, as?: string, body?: string): Promise<number> {
  const tls = path.join(dir, 'secrets', 'tls');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: ETCD_PORT,
        method,
        path: endpoint,
        ca: readFileSync(path.join(tls, 'ca.crt')),
        ...(as && { cert: readFileSync(path.join(tls, `${as}.crt`)), key: readFileSync(path.join(tls, `${as}.key`)) }),
        headers: body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {},
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Returns what was let in without credentials (or beyond its rights); empty when every door held. */
export async function openDoors(dir: string): Promise<string[]> {
  const open: string[] = [];
  for (const host of [path.join(dir, 'node1'), '127.0.0.1']) {
    // No password given: a server that asks for one makes the client fail; one that trusts lets it in.
    const client = new Client({ host, port: PG_PORT, user: 'postgres', database: 'postgres' });
    const connected = await client.connect().then(
      () => true,
      () => false,
    );
    await client.end().catch(() => undefined);
    if (connected) open.push(`PostgreSQL as postgres without a password (${host === '127.0.0.1' ? 'TCP' : 'socket'})`);
  }
  // patroni.yml's namespace (/works-api/) and scope (works).
  const leader = '/v2/keys/works-api/works/leader';
  // The control: HAProxy's certificate reads the leader key (404 before there is one), so a refusal below is etcd's.
  const control = await etcd(dir, 'GET', `${leader}?quorum=true`, 'haproxy').catch((error: Error) => error.message);
  if (control !== 200) open.push(`(control) etcd did not let HAProxy's certificate read the leader key: ${control}`);
  const status = async (url: string, init?: RequestInit) =>
    (await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) })).status;
  const doors: Array<[string, () => Promise<number>]> = [
    [
      "etcd without a client certificate: read of Patroni's configuration",
      () => etcd(dir, 'GET', '/v2/keys/works-api/works/config'),
    ],
    [
      "etcd over plain HTTP: read of Patroni's configuration",
      () => status(`http://127.0.0.1:${ETCD_PORT}/v2/keys/works-api/works/config`),
    ],
    // A key of its own, outside Patroni's scope: harmless if the write goes through.
    [
      'etcd over plain HTTP: a write through the v3 API',
      () =>
        status(`http://127.0.0.1:${ETCD_PORT}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({ key: btoa('ha-check-probe'), value: btoa('x') }),
        }),
    ],
    [
      "etcd as HAProxy: read of Patroni's configuration",
      () => etcd(dir, 'GET', '/v2/keys/works-api/works/config', 'haproxy'),
    ],
    // A key of its own, outside Patroni's scope: harmless if the write goes through.
    ['etcd as HAProxy: a write', () => etcd(dir, 'PUT', '/v2/keys/works-api/ha-check-probe', 'haproxy', 'value=x')],
    [
      "etcd as Patroni: a write outside Patroni's namespace",
      () => etcd(dir, 'PUT', '/v2/keys/ha-check-probe', 'patroni', 'value=x'),
    ],
    [
      'etcd as Patroni: a write through the v3 API',
      () =>
        etcd(dir, 'POST', '/v3/kv/put', 'patroni', JSON.stringify({ key: btoa('ha-check-probe'), value: btoa('x') })),
    ],
    // POST /reload rereads the configuration file: harmless if it goes through.
    [
      "Patroni's REST API: POST /reload without credentials",
      () => status(`http://127.0.0.1:${REST_PORT}/reload`, { method: 'POST' }),
    ],
    ["HAProxy's stats page without credentials", () => status(`http://127.0.0.1:${STATS_PORT}/`)],
  ];
  for (const [door, knock] of doors) {
    // A refused TLS handshake or connection is a closed door; any 2xx or 3xx answer an open one.
    const code = await knock().catch(() => 'refused' as const);
    if (code !== 'refused' && code < 400) open.push(`${door} (answered ${code})`);
  }
  return open;
}

/**
 * Samples every process's command line every `everyMs` for the cluster's secrets (its secrets/*.password files);
 * `stop()` resolves with what it saw: the command (secret masked) and which secret.
 */
export function watchCommandLines(dir: string, everyMs = 250): { stop: () => string[] } {
  const folder = path.join(dir, 'secrets');
  const secrets = readdirSync(folder)
    .filter((file) => file.endsWith('.password'))
    .map((file) => ({ name: file, value: readFileSync(path.join(folder, file), 'utf8').trim() }))
    .filter((secret) => secret.value.length >= 8);
  const seen = new Map<string, string>();
  const sample = () => {
    for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
      let command: string;
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        continue; // ended meanwhile
      }
      for (const secret of secrets)
        if (command.includes(secret.value))
          seen.set(
            `${pid} ${secret.name}`,
            `${command.replaceAll(secret.value, '***').slice(0, 200)} (${secret.name})`,
          );
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return [...seen.values()];
    },
  };
}
