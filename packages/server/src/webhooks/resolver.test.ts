import { createSocket, type Socket } from 'node:dgram';
import { resolveDeliveryAddress } from './addresses';
import { dnsLookup } from './resolver';

/** The name asked in a DNS query (labels from byte 12) and its type (A = 1, AAAA = 28). */
function questionOf(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
    at += 1 + query[at]!;
  }
  return { name: labels.join('.'), type: query.readUInt16BE(at + 1), end: at + 5 };
}

const ipv4Bytes = (address: string) => Buffer.from(address.split('.').map(Number));
const ipv6Bytes = (address: string) => {
  const [head, tail = ''] = address.split('::') as [string, string?];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 255]));
};

/**
 * A DNS server on loopback that answers from `zone` (a name → its A and AAAA addresses; unknown names get
 * NXDOMAIN), or never answers when `zone` is null. Records every question it got.
 */
async function startDnsServer(zone: Record<string, string[]> | null) {
  const socket: Socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    const question = questionOf(query);
    questions.push(`${question.name} ${question.type === 28 ? 'AAAA' : 'A'}`);
    if (zone === null) return; // drops every query
    const known = zone[question.name];
    const family = question.type === 28 ? 6 : 4;
    const rdata = (known ?? [])
      .filter((address) => address.includes(':') === (family === 6))
      .map((address) => (family === 6 ? ipv6Bytes(address) : ipv4Bytes(address)));
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN if unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(rdata.length, 6);
    const answers = rdata.map((bytes) => {
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(question.type, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(bytes.length, 10);
      return Buffer.concat([record, bytes]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, question.end), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return { server: `127.0.0.1:${port}`, questions, close: () => new Promise<void>((r) => socket.close(r)) };
}

describe('dnsLookup (c-ares)', () => {
  it('returns every A and AAAA address, IPv4 first, and the guard checks each of them', async () => {
    const dns = await startDnsServer({
      'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
      'rebind.example.com': ['93.184.216.34', '::ffff:a00:1'], // ::ffff:10.0.0.1
    });
    try {
      const lookup = dnsLookup({ servers: [dns.server] });
      await expect(lookup('hooks.example.com')).resolves.toEqual([
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ]);
      await expect(resolveDeliveryAddress(new URL('https://hooks.example.com/'), false, lookup)).resolves.toEqual({
        address: '93.184.216.34',
        family: 4,
      });
      // A public A record does not vouch for a private AAAA one.
      await expect(resolveDeliveryAddress(new URL('https://rebind.example.com/'), false, lookup)).rejects.toThrow(
        /^the host name does not resolve to public addresses only$/,
      );
      await expect(lookup('nowhere.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    } finally {
      await dns.close();
    }
  });

  it('stops querying a server that never answers when the signal aborts', async () => {
    const dns = await startDnsServer(null);
    try {
      const lookup = dnsLookup({ servers: [dns.server] });
      const started = performance.now();
      await expect(lookup('slow.example.com', { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({
        code: 'ECANCELLED',
      });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(dns.questions).toEqual(expect.arrayContaining(['slow.example.com A', 'slow.example.com AAAA']));
    } finally {
      await dns.close();
    }
  });

  it('answers localhost itself (c-ares reads no /etc/hosts) and never queries for it', async () => {
    const dns = await startDnsServer(null);
    try {
      const lookup = dnsLookup({ servers: [dns.server] });
      for (const host of ['localhost', 'LOCALHOST.', 'hooks.localhost']) {
        await expect(lookup(host)).resolves.toEqual([
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ]);
      }
      // Loopback all the same: refused unless private addresses are allowed.
      await expect(resolveDeliveryAddress(new URL('https://localhost/'), false, lookup)).rejects.toThrow(
        'the host name does not resolve to public addresses only',
      );
      await expect(resolveDeliveryAddress(new URL('http://localhost:3000/'), true, lookup)).resolves.toEqual({
        address: '127.0.0.1',
        family: 4,
      });
      expect(dns.questions).toEqual([]);
    } finally {
      await dns.close();
    }
  });
});
