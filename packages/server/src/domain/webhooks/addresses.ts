import { BlockList, isIP } from 'node:net';
import { ruleMessages } from '../validation-messages';

/**
 * SSRF guard for webhook URLs: which addresses a delivery may connect to. Everything that is not a public
 * unicast address is refused: loopback, private, carrier-grade NAT, link-local, unique-local, multicast,
 * documentation, benchmarking and reserved ranges, in IPv4 and IPv6, and IPv4 addresses embedded in IPv6
 * (IPv4-mapped, IPv4-compatible, NAT64 with the well-known and the local-use prefix, 6to4) are judged as the IPv4
 * address they carry.
 */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries, for the forms that route to one; null otherwise. */
function embeddedIPv4(address: string): string | null {
  const groups = expandIPv6(address);
  if (!groups) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (zero(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return v4(groups[6]!, groups[7]!);
  // 64:ff9b::a.b.c.d (NAT64, the well-known prefix)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6]!, groups[7]!);
  // 64:ff9b:1::/48 (NAT64, the local-use prefix of RFC 8215): a network may put the IPv4 address at any of RFC
  // 6052's positions under it. Read it at the end, as under the well-known prefix, when the rest is zero; any
  // other address in it could carry any IPv4 address, so it is judged as one that is not public.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups[2] === 1) {
    return zero(3, 6) ? v4(groups[6]!, groups[7]!) : '0.0.0.0';
  }
  // 2002:aabb:ccdd::/48 (6to4)
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tails included), or null if it is not one. */
function expandIPv6(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -dotted[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  return [...left, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...right];
}

/** True when a delivery may connect to this IP address (a public unicast address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !refused.check(address, 'ipv4');
  if (family !== 6) return false;
  const carried = embeddedIPv4(address);
  if (carried !== null) return isPublicAddress(carried);
  return !refused.check(address.split('%')[0]!, 'ipv6');
}

/** Why a webhook URL cannot be used, or null when its form is fine (its addresses are checked when it is resolved). */
export function urlProblem(url: string, allowPrivate: boolean): string | null {
  if (!URL.canParse(url)) return ruleMessages.url;
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return ruleMessages.https;
  if (parsed.username || parsed.password) return ruleMessages.noCredentials;
  const host = hostOf(parsed);
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) return ruleMessages.publicAddress;
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return ruleMessages.publicAddress;
  if (!allowPrivate && !onHttpsPort(parsed)) return ruleMessages.port443;
  return null;
}

/**
 * Deliveries go to port 443 only: with any port, `lastError` would tell a caller which ports of a host are open
 * (a blind port scan through us). WEBHOOK_ALLOW_PRIVATE_URLS lifts it, with the address rules, for local receivers.
 */
const onHttpsPort = (url: URL): boolean => url.port === '' || url.port === '443';

/** The host to resolve: brackets stripped from IPv6 literals. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Every address a host name resolves to. `signal` aborts when the caller stops waiting (a lookup may ignore it). */
export type Lookup = (
  host: string,
  options?: { signal?: AbortSignal | undefined },
) => Promise<Array<{ address: string; family: number }>>;

/**
 * Resolves the URL's host once and returns the address to connect to: the first one, provided every address it
 * resolves to is public (unless private ones are allowed). The caller connects to exactly this address, so a DNS
 * answer that changes between check and connect (rebinding) cannot redirect the delivery.
 */
export async function resolveDeliveryAddress(
  url: URL,
  allowPrivate: boolean,
  lookup: Lookup,
  signal?: AbortSignal,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  const literal = isIP(host);
  // An IP literal is its own address: no query.
  const addresses = literal !== 0 ? [{ address: host, family: literal }] : await lookup(host, { signal });
  if (addresses.length === 0) throw new AddressRefused(`${host} did not resolve`);
  if (!allowPrivate) {
    const bad = addresses.find((entry) => !isPublicAddress(entry.address));
    if (bad) throw new AddressRefused(`${host} resolves to ${bad.address}, which is not a public address`);
    if (!onHttpsPort(url)) throw new AddressRefused(`port ${url.port} is not 443`);
  }
  const chosen = addresses[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export class AddressRefused extends Error {
  override name = 'AddressRefused';
}
