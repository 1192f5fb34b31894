import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The SMTP envelope. */
  from: string;
  to: string[];
  /** The message as sent, and parsed. */
  raw: string;
  parsed: ParsedMail;
}

export interface SmtpSink {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Answer every message with this SMTP reply instead of accepting it (e.g. 550 or 451), or accept again (null). */
  refuseWith(reply: { code: number; message: string } | null): void;
  /** Accept messages only once `gate` settles (it is received meanwhile, not yet acknowledged); null: at once. */
  holdUntil(gate: Promise<unknown> | null): void;
  /** Resolves once `count` messages have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** A real SMTP server on loopback (smtp-server), keeping what it receives: the tests' mail sink. */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  let refusal: { code: number; message: string } | null = null;
  let held: Promise<unknown> | null = null;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusal) {
          const error = Object.assign(new Error(refusal.message), { responseCode: refusal.code });
          return callback(error);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        void simpleParser(raw).then((parsed) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            raw,
            parsed,
          });
          for (const wake of waiters.splice(0)) wake();
          void (held ?? Promise.resolve()).finally(() => callback());
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${actualPort}`,
    port: actualPort,
    received,
    refuseWith(reply) {
      refusal = reply;
    },
    holdUntil(gate) {
      held = gate;
    },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the SMTP sink got ${received.length} of ${count} messages`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 200);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
