import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends exact bytes to the server (what fetch refuses to send: repeated or oversized headers, raw NUL, invalid
 * UTF-8, `..` segments, a body larger than it declares) and reads one response. `body` may be a generator of
 * chunks (a 20 MB upload is sent as it is read); the response may come before the body is all sent, and the
 * server may close the connection then, which is not an error here. Asks the server to close after answering.
 */
export function rawRequest(
  port: number,
  head: string,
  body: Buffer | string | Iterable<Buffer> = '',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      const response = parse(Buffer.concat(received));
      if (!response) return;
      settled = true;
      socket.destroy();
      resolve(response);
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      finish();
    });
    socket.on('error', () => finish()); // a reset after the answer is fine; no answer at all is not (below)
    socket.on('close', () => {
      finish();
      if (!settled)
        reject(
          new Error(`the connection closed without a complete response (${Buffer.concat(received).length} bytes read)`),
        );
    });
    socket.on('connect', () => {
      const headText = head.endsWith('\r\n\r\n')
        ? head
        : `${head.replace(/(\r\n)*$/, '')}\r\nConnection: close\r\n\r\n`;
      socket.write(Buffer.from(headText, 'latin1'));
      const chunks = typeof body === 'string' || Buffer.isBuffer(body) ? [Buffer.from(body)] : body;
      const iterator = chunks[Symbol.iterator]();
      const pump = () => {
        for (;;) {
          if (settled || socket.destroyed) return;
          const next = iterator.next();
          if (next.done) return;
          if (!socket.write(next.value)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

/** One complete HTTP/1.1 response (with Content-Length) from the bytes read so far, or undefined. */
function parse(bytes: Buffer): RawResponse | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (bytes.length < end + 4 + length) return undefined;
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]),
    headers,
    body: bytes.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/** `size` bytes of `byte`, in chunks of 64 KiB, made as they are sent. */
export function* bytes(size: number, byte = 0x20): Generator<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, byte);
  for (let sent = 0; sent < size; sent += chunk.length)
    yield sent + chunk.length <= size ? chunk : chunk.subarray(0, size - sent);
}

/** The same chunks framed for `Transfer-Encoding: chunked`, with the closing chunk. */
export function* chunked(chunks: Iterable<Buffer>): Generator<Buffer> {
  for (const chunk of chunks)
    yield Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  yield Buffer.from('0\r\n\r\n');
}
