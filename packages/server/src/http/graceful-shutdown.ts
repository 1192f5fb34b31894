import type { Server, ServerResponse } from 'node:http';

/**
 * Whether the server is shutting down, shared by main.ts (which starts it) and the app (readiness turns 503,
 * and responses close their connections so keep-alive clients move to another server).
 */
export class Lifecycle {
  draining = false;
  private readonly inFlight = new Set<ServerResponse>();

  /** Keeps track of the responses in flight, so that shutting down can close their connections too. */
  track(res: ServerResponse): void {
    if (this.draining) {
      res.shouldKeepAlive = false;
    } else {
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
    }
  }

  startDraining(): void {
    this.draining = true;
    // Responses not yet sent go out with `Connection: close`; Node then closes their sockets.
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  }
}

/**
 * Stops accepting connections and waits for the requests in flight, up to `timeoutMs`; then cuts off whatever
 * is left. Resolves true when everything finished in time.
 */
export async function drainServer(server: Server, timeoutMs: number): Promise<boolean> {
  const closed = new Promise<true>((resolve) => server.close(() => resolve(true)));
  server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const drained = await Promise.race([closed, timedOut]);
  clearTimeout(timer);
  if (!drained) server.closeAllConnections();
  return drained;
}
