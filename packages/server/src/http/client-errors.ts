import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ProblemCode, problemCodes } from '../domain/errors';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problems';
import { REQUEST_ID_HEADER } from './request-id';

/** Node's limit on a request's header section (`maxHeaderSize`, 16 KiB by default): ours too. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** How long a refused connection may keep sending (the rest of a huge header) before it is cut. */
const LINGER_MS = 5_000;

/**
 * Requests Node's HTTP parser refuses before Express sees them: a header section over MAX_HEADER_BYTES (431) or
 * bytes that are not HTTP/1.1 (400). Node's default answer is a bare status line and a closed socket, which a
 * client still sending its headers sees as a reset; here it is a problem+json like every other error, and the
 * connection is half-closed and drained (so the client reads the answer rather than a reset), then cut.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    // A client too slow to send its request (Node's requestTimeout): Node's own answer, as before.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return void socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    const code: ProblemCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'malformed_request';
    const detail =
      code === 'headers_too_large'
        ? `The request's header section is over ${MAX_HEADER_BYTES} bytes.`
        : 'The request is not valid HTTP/1.1.';
    const { status } = problemCodes[code];
    const body = JSON.stringify(problemBody(code, detail, requestTarget(error.rawPacket)));
    socket.end(
      [
        `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        `${REQUEST_ID_HEADER}: ${randomUUID()}`,
        'X-Content-Type-Options: nosniff',
        // As every API response (security.ts): nothing on the way may keep it.
        'Cache-Control: no-store',
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
    // Read and drop whatever else arrives, so closing does not reset the connection under the client's feet.
    socket.on('data', () => undefined);
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}

/** The path of the refused request when its first line is readable (for `instance`), else `/`. */
function requestTarget(raw: Buffer | undefined): string {
  const line = raw?.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0] ?? '';
  const target = /^[A-Z]+ (\/[\x21-\x7e]*) HTTP\/1\.[01]$/.exec(line)?.[1];
  return target?.split('?')[0] ?? '/';
}
