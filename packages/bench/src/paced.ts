import { Agent, request as httpRequest } from 'node:http';
import type { Request } from 'autocannon';
import type { LoadResult } from './load';

/**
 * Latency at a fixed load. autocannon's rate limit sends each second's quota as fast as it can and then waits,
 * so "half the maximum rate" would be measured in full-speed bursts. Here requests start evenly spaced
 * (open loop: a slow answer does not delay the next start), and latency counts from the planned start, so a
 * stall shows up in full (no coordinated omission). A scenario's list of requests runs as one chain per start
 * (confirm, then validate on the same request), spaced so that HTTP requests per second match `rate`.
 */
export interface PacedOptions {
  url: string;
  requests: Request[];
  rate: number;
  durationS: number;
  /** Upper bound on chains in flight; starts that find it full are counted as errors. */
  maxInFlight?: number;
}

export async function runPaced(options: PacedOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxInFlight ?? 256 });
  const base = new URL(options.url);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let inFlight = 0;
  const chainsPerSecond = options.rate / options.requests.length;
  const chains = Math.max(1, Math.round(chainsPerSecond * options.durationS));
  const started = performance.now();

  const send = (req: Request) =>
    new Promise<number>((resolve) => {
      const body = typeof req.body === 'string' ? req.body : undefined;
      const outgoing = httpRequest(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method: req.method ?? 'GET',
          path: req.path ?? '/',
          headers: {
            ...(req.headers as Record<string, string>),
            ...(body !== undefined && { 'Content-Length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (typeof req.onResponse === 'function')
              req.onResponse(status, Buffer.concat(chunks).toString('utf8'), {}, res.headers);
            resolve(status);
          });
        },
      );
      outgoing.on('error', () => resolve(0));
      outgoing.end(body);
    });

  const chain = async (plannedAt: number) => {
    const context: Record<string, unknown> = {};
    let startAt = plannedAt;
    for (const template of options.requests) {
      const req =
        typeof template.setupRequest === 'function' ? template.setupRequest({ ...template }, context) : template;
      const status = await send(req);
      const now = performance.now();
      latencies.push(now - startAt);
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (status < 200 || status >= 300) errors++;
      startAt = now;
    }
  };

  const pending: Promise<void>[] = [];
  for (let i = 0; i < chains; i++) {
    const plannedAt = started + (i * 1000) / chainsPerSecond;
    const wait = plannedAt - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight >= (options.maxInFlight ?? 256)) {
      errors++;
      continue;
    }
    inFlight++;
    pending.push(chain(plannedAt).finally(() => inFlight--));
  }
  await Promise.all(pending);
  agent.destroy();
  const durationS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    durationS,
    rps: latencies.length / durationS,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
    statusCodes,
  };
}
