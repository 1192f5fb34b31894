import { Resolver } from 'node:dns/promises';
import type { Lookup } from './addresses';

/** Names that are loopback by definition (RFC 6761), answered without a query. */
const LOOPBACK = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];
const isLocalhost = (host: string): boolean => {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};

/** A family that has no address for the name: not a failure when the other family has some. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Resolves webhook host names with c-ares (`dns.promises.Resolver`) rather than `dns.lookup`: getaddrinfo runs on
 * libuv's 4-thread pool, shared with fs, crypto and zlib, so hosts that resolve slowly (or never) could hold every
 * thread; c-ares queries from the event loop. Each lookup has its own resolver, cancelled when `signal` aborts (the
 * attempt's deadline), so an unanswered query ends with the attempt instead of running out its own retries.
 *
 * The A and AAAA answers are all returned (IPv4 first), so the caller's address checks see every one of them.
 * c-ares does not read /etc/hosts: `localhost` and `*.localhost` are answered here as loopback, and any other name
 * goes to the DNS servers (the system's, or `servers`).
 */
export function dnsLookup(options: { servers?: readonly string[] } = {}): Lookup {
  return async (host, { signal } = {}) => {
    if (isLocalhost(host)) return LOOPBACK;
    signal?.throwIfAborted();
    const resolver = new Resolver();
    if (options.servers) resolver.setServers(options.servers);
    const cancel = () => resolver.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length > 0) return addresses;
      const failures = [v4, v6].flatMap((result) => (result.status === 'rejected' ? [result.reason as Error] : []));
      // A timeout or a server failure says more than "no such name".
      throw failures.find((error) => !NO_ADDRESS.has((error as NodeJS.ErrnoException).code ?? '')) ?? failures[0]!;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  };
}

/** Webhook hosts are resolved with c-ares on the system's DNS servers, off libuv's thread pool. */
export const systemLookup: Lookup = dnsLookup();
