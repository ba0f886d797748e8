/**
 * Addresses a webhook must not reach unless the operator allows it (issue 11 item 8): a delivery's
 * URL comes from configuration, but a receiver on loopback, a link-local address (the cloud
 * metadata service at 169.254.169.254) or a private network is where a mistaken or hostile URL
 * does harm. Node's own `net.BlockList` holds the ranges.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for loopback, link-local, private, reserved and multicast addresses (IPv4-mapped too). */
export function isPrivateAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/.exec(a);
  if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
  const family = isIP(a);
  if (family === 4) return blocked.check(a, 'ipv4');
  if (family === 6) return blocked.check(a, 'ipv6');
  return false;
}

/** A host that is private by its name alone: an address literal in those ranges, or localhost. */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || isPrivateAddress(h);
}

export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveHost: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The private address `hostname` resolves to, if any (undefined when it resolves only to public
 * ones, or not at all — the request itself then fails as a network error).
 */
export async function privateAddressOf(
  hostname: string,
  resolve: ResolveHost = resolveHost,
): Promise<string | undefined> {
  const h = hostname.replace(/^\[|\]$/g, '');
  if (isPrivateHost(h)) return h;
  if (isIP(h)) return undefined;
  let addresses: string[];
  try {
    addresses = await resolve(h);
  } catch {
    return undefined;
  }
  return addresses.find((a) => isPrivateAddress(a));
}
