import { createServer } from 'node:http';

/**
 * The healthy receiver of `pnpm bench --webhooks`, in its own process so its work does not slow the load generator.
 * Answers every webhook 200 at once and keeps, for each, the delivery lag: arrival time minus the event's
 * `createdAt` (the time of the change, set by the server; same machine, same clock). The parent asks for the lags
 * over IPC ('lags' → { lags, ids }) and they are reset.
 */
let lags: number[] = [];
const ids = new Set<string>();
let duplicates = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const arrived = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string };
    lags.push(arrived - Date.parse(event.createdAt));
    if (ids.has(event.id)) duplicates++;
    ids.add(event.id);
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
process.on('message', (message) => {
  if (message === 'lags') {
    process.send!({ lags, duplicates });
    lags = [];
  }
});
process.on('disconnect', () => process.exit(0));
