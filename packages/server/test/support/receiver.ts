import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` webhooks have arrived in all (rejects after `timeoutMs`, so a missing one fails fast). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on 127.0.0.1. `answer` decides each response (200 by default); it sees how many webhooks
 * came before this one.
 */
export async function startReceiver(
  answer: (received: Received, index: number, res: ServerResponse) => void = (_r, _i, res) => res.end('ok'),
): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const item = { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers };
      received.push(item);
      answer(item, received.length - 1, res);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    waitFor(count, timeoutMs = 15_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} webhooks, got ${received.length} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
