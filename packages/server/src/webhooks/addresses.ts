import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ruleMessages } from '../domain/validation-messages';

/**
 * SSRF guard for webhook URLs: which addresses a delivery may connect to. The special-purpose ranges are not kept
 * here by hand: they are ipaddr.js's range names, which follow the IANA IPv4 and IPv6 special-purpose address
 * registries (loopback, private, carrier-grade NAT, link-local, unique-local, multicast, documentation including
 * 3fff::/20, benchmarking, segment routing 5f00::/16, reserved, ...). A delivery may connect only to an address
 * ipaddr.js calls `unicast`; an IPv6 one must also lie in 2000::/3, the one block IANA allocates as global
 * unicast, so nothing else of the IPv6 space (such as the deprecated IPv4-compatible ::a.b.c.d) passes as public.
 *
 * An IPv6 address that carries an IPv4 one by a fixed rule is judged as that IPv4 address: IPv4-mapped
 * (::ffff:a.b.c.d), NAT64's well-known prefix (64:ff9b::/96) and 6to4 (2002::/16). The other translation ranges
 * are refused whole: SIIT's IPv4-translated ::ffff:0:a.b.c.d, NAT64's local-use 64:ff9b:1::/48 (where its
 * addresses lead is the local network's choice) and Teredo.
 */
const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** The IPv4 address an IPv6 address carries (null: it is in a translation range that is refused whole). */
function carriedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | null | undefined {
  const parts = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  switch (range) {
    case 'ipv4Mapped':
      return address.toIPv4Address();
    case 'rfc6052': // 64:ff9b::/96 (well-known) or 64:ff9b:1::/48 (local use)
      return parts[2] === 0 ? v4(parts[6]!, parts[7]!) : null;
    case '6to4':
      return v4(parts[1]!, parts[2]!);
    case 'rfc6145':
    case 'teredo':
      return null;
    default:
      return undefined;
  }
}

/** True when a delivery may connect to this IP address (a public unicast address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads a dotted tail after `::` as IPv4-mapped (::8.8.8.8 as ::ffff:8.8.8.8), which is not the
    // address a socket connects to: the URL parser writes it as it is (::808:808), zone id left off.
    parsed = ipaddr.parse(family === 6 ? new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1) : address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  // ipaddr.js knows more range names than its type declarations list.
  const range: string = v6.range();
  const carried = carriedIPv4(v6, range);
  if (carried !== undefined) return carried !== null && carried.range() === 'unicast';
  return range === 'unicast' && v6.match(GLOBAL_UNICAST_IPV6);
}

/** Why a webhook URL cannot be used, or null when its form is fine (its addresses are checked when it is resolved). */
export function urlProblem(url: string, allowPrivate: boolean): string | null {
  if (!URL.canParse(url)) return ruleMessages.url;
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return ruleMessages.https;
  if (parsed.username || parsed.password) return ruleMessages.noCredentials;
  const host = hostOf(parsed);
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) return ruleMessages.publicAddress;
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return ruleMessages.publicHost;
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
 * Why a delivery to a host name is refused, in the same words whatever the reason (no such name, a failed lookup,
 * no address, a private one): different answers would let any member map the names of the network the server sits
 * in, through an endpoint's creation or its deliveries' `lastError`. Which address it was stays unsaid too.
 */
export const UNUSABLE_HOST_NAME = 'the host name does not resolve to public addresses only';

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
  const addresses =
    literal !== 0
      ? [{ address: host, family: literal }]
      : await lookup(host, { signal }).catch((error: unknown) => {
          // With private addresses allowed (local development), the resolver's own words help and map nothing.
          throw allowPrivate ? error : new AddressRefused(UNUSABLE_HOST_NAME);
        });
  if (addresses.length === 0) throw new AddressRefused(allowPrivate ? `${host} did not resolve` : UNUSABLE_HOST_NAME);
  if (!allowPrivate) {
    const bad = addresses.some((entry) => !isPublicAddress(entry.address));
    if (bad) throw new AddressRefused(literal !== 0 ? `${host} is not a public address` : UNUSABLE_HOST_NAME);
    if (!onHttpsPort(url)) throw new AddressRefused(`port ${url.port} is not 443`);
  }
  const chosen = addresses[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export class AddressRefused extends Error {
  override name = 'AddressRefused';
}
