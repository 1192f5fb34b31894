import { readFileSync } from 'node:fs';
import type { Request } from 'autocannon';
import type { Fixtures } from './fixtures';
import type { Measurement } from './report';

/**
 * The same requests with a full API key and with a person's session cookie (issue 40): what a session costs the
 * server per request against a key, measured on one server in one run, rounds interleaved. Target: at most 5% more
 * CPU per request.
 */
export const SESSION_CPU_TARGET = 1.05;

export interface CredentialPair {
  id: string;
  title: string;
  /** The request as an integration sends it (Bearer key) and as the console sends it (cookie, own origin). */
  withKey(fixtures: Fixtures): Request;
  withSession(fixtures: Fixtures, cookie: string): Request;
}

let sequence = 0;
const uniqueName = (what: string) => `${what} ${process.pid} ${(++sequence).toString(36)}x`;

export const credentialPairs: CredentialPair[] = [
  {
    id: 'get-tenant',
    title: 'get tenant',
    withKey: (f) => ({
      method: 'GET',
      path: `/v1/tenants/${f.readTenantId}`,
      headers: { Authorization: `Bearer ${f.apiKey}` },
    }),
    withSession: (f, cookie) => ({ method: 'GET', path: `/v1/tenants/${f.readTenantId}`, headers: { Cookie: cookie } }),
  },
  {
    id: 'create-work',
    title: 'create work',
    withKey: (f) => ({
      method: 'POST',
      path: `/v1/tenants/${f.writeTenantId}/works`,
      headers: { Authorization: `Bearer ${f.apiKey}`, 'Content-Type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: uniqueName('Key work') }) }),
    }),
    withSession: (f, cookie) => ({
      method: 'POST',
      path: `/v1/tenants/${f.writeTenantId}/works`,
      // As the console sends it: the cookie, and the browser's Fetch Metadata saying it comes from our own page.
      headers: { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: uniqueName('Session work') }) }),
    }),
  },
];

/**
 * Signs the fixtures' user in as a person does: a sign-in email (the server runs the dev mailbox, which prints the
 * link in its log), then the link's token for a session. Returns the `Cookie` header value.
 */
export async function signInForBench(baseUrl: string, email: string, logFile: string): Promise<string> {
  const asked = await fetch(`${baseUrl}/v1/sessions/email`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  if (asked.status !== 202) throw new Error(`bench set-up: POST /v1/sessions/email answered ${asked.status}`);
  const deadline = Date.now() + 30_000;
  let token: string | undefined;
  while (!token) {
    if (Date.now() > deadline) throw new Error(`bench set-up: no sign-in link for ${email} in ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((entry) => entry.includes(`"to":"${email}"`) && entry.includes('signInLink'));
    token = line && /#token=([A-Za-z0-9_-]{43})/.exec(line)?.[1];
  }
  const res = await fetch(`${baseUrl}/v1/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  const cookie = res.headers.getSetCookie().find((line) => line.startsWith('works_session='));
  if (res.status !== 201 || !cookie) throw new Error(`bench set-up: POST /v1/sessions answered ${res.status}`);
  return cookie.split(';')[0]!;
}

export interface CredentialRow {
  id: string;
  title: string;
  key: Measurement;
  session: Measurement;
  /** Session CPU ms per request over the key's (median rounds). */
  cpuRatio?: number;
}

export function formatCredentials(rows: CredentialRow[]): string {
  const lines = [
    'credentials: the same requests with a full API key and with a session cookie (one server, interleaved rounds)',
    `  ${'scenario'.padEnd(14)} ${'key req/s'.padStart(10)} ${'session req/s'.padStart(14)} ${'key CPU ms/req'.padStart(15)} ${'session CPU ms/req'.padStart(19)}  session/key CPU`,
  ];
  for (const row of rows)
    lines.push(
      `  ${row.title.padEnd(14)} ${row.key.rps.toFixed(0).padStart(10)} ${row.session.rps.toFixed(0).padStart(14)} ${(row.key.cpuMsPerRequest ?? NaN).toFixed(3).padStart(15)} ${(row.session.cpuMsPerRequest ?? NaN).toFixed(3).padStart(19)}  ${row.cpuRatio === undefined ? 'n/a' : `${(row.cpuRatio * 100).toFixed(1)}%`} (target ≤ ${(SESSION_CPU_TARGET * 100).toFixed(0)}%)`,
    );
  return lines.join('\n');
}
