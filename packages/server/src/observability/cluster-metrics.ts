import cluster from 'node:cluster';
import type { Registry } from 'prom-client';

/**
 * Under WEB_CONCURRENCY the port is shared: a scrape of /metrics reaches one worker, chosen by the primary's
 * round-robin. That worker asks the primary, which gathers every worker's registry (prom-client's
 * AggregatorRegistry, over the cluster's IPC channel) and answers with the merged text, so one scrape covers every
 * process, not one at random.
 */
const ASK = 'works-api:metrics?';
const ANSWER = 'works-api:metrics';
/** prom-client's own limit for a worker's answer is 5 s; the asking worker waits a little longer than that. */
const ANSWER_TIMEOUT_MS = 6_000;

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** In the primary: answers workers' requests for the whole cluster's metrics. */
export async function serveClusterMetrics(): Promise<void> {
  const { AggregatorRegistry } = await import('prom-client');
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Partial<Ask>) => {
    if (message?.type !== ASK || typeof message.id !== 'number') return;
    const { id } = message;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id, text } satisfies Answer),
      (error: unknown) =>
        worker.isConnected() && worker.send({ type: ANSWER, id, error: (error as Error).message } satisfies Answer),
    );
  });
}

/**
 * In a worker: answers the primary's collection with `registry`, and returns how to scrape the whole cluster.
 * Outside a cluster, undefined (the process's own registry is the scrape).
 */
export async function joinClusterMetrics(registry: Registry): Promise<(() => Promise<string>) | undefined> {
  if (!cluster.isWorker) return undefined;
  const { AggregatorRegistry } = await import('prom-client');
  new AggregatorRegistry(); // installs the worker's answer to the primary's collection
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: Partial<Answer>) => {
    if (message?.type !== ANSWER || typeof message.id !== 'number') return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (typeof message.text === 'string') waiter.resolve(message.text);
    else waiter.reject(new Error(`the cluster's metrics could not be collected: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the cluster's primary did not answer within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      pending.set(id, {
        resolve: (text) => (clearTimeout(timer), resolve(text)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      process.send!({ type: ASK, id } satisfies Ask);
    });
}
