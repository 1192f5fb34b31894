// A tiny webhook receiver: verifies each event with the endpoint's secret and prints it.
// Usage: WEBHOOK_SECRET=whsec_… node packages/client/examples/webhook-receiver.mjs [port]
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@works-api/client';

const secret = process.env.WEBHOOK_SECRET;
const port = Number(process.argv[2] ?? 4000);

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      // The raw body, exactly as received: the signature covers its bytes.
      const event = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      console.log(`verified ${event.type} ${req.headers['webhook-id']}`);
      console.log(JSON.stringify(event, null, 2));
      res.end('ok');
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.log(`refused: ${error.reason}`);
      res.statusCode = 400;
      res.end(error.reason);
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`receiver listening on http://127.0.0.1:${port}/hooks`));
