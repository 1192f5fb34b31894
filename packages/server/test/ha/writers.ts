import { randomUUID } from 'node:crypto';
import { type Load, startLoad } from '../support/load';

/**
 * Write load with a ledger of what the server acknowledged, like a careful client: each worker creates a work, a
 * request in it (which queues an email and a webhook event), then confirms that request, over and over. A write
 * answered 503 (or cut off) is sent again, the same write with the same Idempotency-Key, until it is acknowledged,
 * so that a retry after a failover must never create a second row. Every attempt is recorded with its timing.
 */

export type WriteKind = 'work' | 'request' | 'confirm';

export interface Attempt {
  kind: WriteKind;
  /** performance.now() when it was sent and when its answer ended. */
  sentAt: number;
  endedAt: number;
  /** 0: no HTTP answer (refused, reset). */
  status: number;
  code?: string;
  retryAfter: string | null;
}

export interface Acknowledged {
  kind: WriteKind;
  /** Where to read it back. */
  url: string;
  /** The id it created (works and requests) or confirmed. */
  id: string;
  /** The unique name (works) or recipient email (requests) it was created with. */
  key: string;
  /** performance.now() when its acknowledgement arrived. */
  at: number;
}

export interface Writers {
  load: Load<void>;
  acknowledged: Acknowledged[];
  /** Attempts in completion order (each write's retries included). */
  attempts: Attempt[];
}

/**
 * What a careful client sends again: an outage (503), a lost answer, and a key whose first request is still
 * running (409 idempotency_key_in_use, "retry shortly"). Anything else is a finding, counted by the check.
 */
export const retryable = (attempt: Attempt): boolean =>
  attempt.status === 503 ||
  attempt.status === 0 ||
  (attempt.status === 409 && attempt.code === 'idempotency_key_in_use');

/** How long a worker waits before sending a refused write again (a client honouring Retry-After waits 5 s). */
const RETRY_PAUSE_MS = 200;

export function startWriters(
  baseUrl: string,
  apiKey: string,
  tenantId: string,
  { workers, maxMs, run = randomUUID().slice(0, 8) }: { workers: number; maxMs: number; run?: string },
): Writers {
  const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
  const tenantPath = `/v1/tenants/${tenantId}`;
  const acknowledged: Acknowledged[] = [];
  const attempts: Attempt[] = [];
  const state = new Map<number, { work?: string; request?: string }>();
  let stopping = false;

  /** Sends one write until it is acknowledged (or the load stops); resolves with its body when acknowledged. */
  async function write(
    kind: WriteKind,
    method: string,
    path: string,
    body: unknown,
    idempotencyKey?: string,
  ): Promise<Record<string, { id: string }> | undefined> {
    for (;;) {
      const sentAt = performance.now();
      let attempt: Attempt;
      let parsed: Record<string, { id: string }> | undefined;
      try {
        const res = await fetch(baseUrl + path, {
          method,
          headers: idempotencyKey ? { ...headers, 'Idempotency-Key': idempotencyKey } : headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        attempt = {
          kind,
          sentAt,
          endedAt: performance.now(),
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          ...(typeof json.code === 'string' && { code: json.code }),
        };
        if (res.status < 300) parsed = json as Record<string, { id: string }>;
      } catch {
        attempt = { kind, sentAt, endedAt: performance.now(), status: 0, retryAfter: null };
      }
      attempts.push(attempt);
      if (parsed) return parsed;
      if (!retryable(attempt) || stopping) return undefined;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }

  const load = startLoad<void>(
    workers,
    async (worker, sequence) => {
      const mine = state.get(worker) ?? {};
      state.set(worker, mine);
      const tag = `${run}-${worker}-${sequence}`;
      const step = mine.work === undefined ? 0 : sequence % 3;
      if (step === 0) {
        const name = `HA ${tag}`;
        const body = await write('work', 'POST', `${tenantPath}/works`, { name }, `work-${tag}`);
        if (body) {
          mine.work = body.work!.id;
          const url = `${tenantPath}/works/${mine.work}`;
          acknowledged.push({ kind: 'work', url, id: mine.work, key: name, at: performance.now() });
        }
      } else if (step === 1) {
        const email = `ha-${tag}@example.com`;
        const path = `${tenantPath}/works/${mine.work}/requests`;
        const body = await write('request', 'POST', path, { title: 'HA', recipient: { email } }, `request-${tag}`);
        if (body) {
          mine.request = body.request!.id;
          const url = `${path}/${mine.request}`;
          acknowledged.push({ kind: 'request', url, id: mine.request, key: email, at: performance.now() });
        }
      } else if (mine.request) {
        const url = `${tenantPath}/works/${mine.work}/requests/${mine.request}`;
        const confirmed = mine.request;
        mine.request = undefined;
        if (await write('confirm', 'PUT', `${url}/confirm`, { answer: 'yes' }))
          acknowledged.push({ kind: 'confirm', url, id: confirmed, key: confirmed, at: performance.now() });
      }
    },
    maxMs,
  );
  const stop = load.stop.bind(load);
  load.stop = () => {
    stopping = true;
    return stop();
  };
  return { load, acknowledged, attempts };
}

/** What a round of failover looked like to the writers, from the blow to the first acknowledged write after it. */
export interface Outage {
  /** From the blow (kill, freeze) to the first write acknowledged after it. */
  withoutWritesMs: number;
  /** From the first refused write after the kill to the last one. */
  refusedForMs: number;
  refused: number;
}

export function outageAfter(attempts: readonly Attempt[], hitAt: number): Outage | undefined {
  const after = attempts.filter((a) => a.sentAt >= hitAt || a.endedAt >= hitAt);
  const firstSuccess = after
    .filter((a) => a.status >= 200 && a.status < 300 && a.sentAt >= hitAt)
    .reduce<Attempt | undefined>((first, a) => (!first || a.endedAt < first.endedAt ? a : first), undefined);
  if (!firstSuccess) return undefined;
  const refused = after.filter((a) => (a.status === 503 || a.status === 0) && a.endedAt <= firstSuccess.endedAt);
  const start = Math.min(...refused.map((a) => a.sentAt));
  const end = Math.max(...refused.map((a) => a.endedAt));
  return {
    withoutWritesMs: firstSuccess.endedAt - hitAt,
    refusedForMs: refused.length ? end - start : 0,
    refused: refused.length,
  };
}
