// Which connections come from a proxy the operator trusts (config `trusted_proxies`): only their
// X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host and Forwarded fields are believed. Anyone
// else's are replaced by what svc sees on the connection (docs/security.md, "Forwarding headers").
import { BlockList, isIP } from 'node:net';

/** An IPv4 peer on a dual-stack listener shows as `::ffff:a.b.c.d`; it is matched as IPv4. */
const MAPPED_IPV4_PREFIX = '::ffff:';

/** The address as svc reports and matches it: IPv4-mapped IPv6 written as plain IPv4. */
export function plainAddress(address: string): string {
  if (address.startsWith(MAPPED_IPV4_PREFIX) && isIP(address.slice(MAPPED_IPV4_PREFIX.length)) === 4) {
    return address.slice(MAPPED_IPV4_PREFIX.length);
  }
  return address;
}

/** Splits `address[/prefix]`; undefined when it is not an IP address with a prefix that fits it. */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const maxPrefix = version === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(maxPrefix) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > maxPrefix) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  /** `cidrs` are validated by the config schema (parseCidr); an invalid one is a programmer error. */
  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const parsed = parseCidr(cidr);
      if (parsed === undefined) throw new Error(`not an address or CIDR: ${cidr}`);
      this.list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
    this.empty = cidrs.length === 0;
  }

  /** True when a connection from this peer address comes from a trusted proxy. */
  trusts(address: string | undefined): boolean {
    if (this.empty || address === undefined) return false;
    const plain = plainAddress(address);
    const version = isIP(plain);
    return version !== 0 && this.list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
  }
}
