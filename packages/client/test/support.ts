import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Drop the connection without answering: the client sees a network error. */
  destroy?: boolean;
}

/**
 * A tiny HTTP server on a random loopback port that answers from a script, one reply per request (the last reply
 * repeats), and records what it received.
 */
const open = new Set<{ close(): Promise<void> }>();

/** Closes every scripted server a test left open (a failed test would otherwise keep jest alive). */
export async function closeScriptedServers(): Promise<void> {
  await Promise.all([...open].map((server) => server.close()));
}

export async function scriptedServer(
  replies: Reply[],
): Promise<{ baseUrl: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const reply = replies[Math.min(received.length, replies.length) - 1]!;
      if (reply.destroy) {
        req.socket.destroy();
        return;
      }
      const isProblem = reply.status >= 400 && reply.body !== undefined && typeof reply.body === 'object';
      res.writeHead(reply.status, {
        ...(reply.body !== undefined && {
          'Content-Type':
            typeof reply.body === 'string' ? 'text/html' : isProblem ? 'application/problem+json' : 'application/json',
        }),
        ...reply.headers,
      });
      res.end(
        reply.body === undefined ? undefined : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handle = {
    baseUrl,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        open.delete(handle);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.add(handle);
  return handle;
}

/** A sleep that records the waits it was asked for and returns at once. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

export const problem = (status: number, code: string) => ({
  type: `https://works-api.dev/problems/${code}`,
  title: code,
  status,
  detail: `A ${code} problem.`,
  instance: '/v1/tenants',
  code,
});

export const user = {
  id: 'u1',
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  createdAt: '2026-11-22T10:15:00.000Z',
};
