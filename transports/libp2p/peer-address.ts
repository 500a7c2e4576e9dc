// Transport addresses as the libp2p transport reads them. A member's own address is its multiaddr with
// the peer id (`/ip4/10.0.0.1/tcp/7946/p2p/12D3KooW...`). Seeds may also be written `host:port`, as in
// `cluster.join`: the dial then learns the peer id from the noise handshake, and the allowlist still
// decides whether the connection is kept.
import { isIP } from 'node:net';
import { multiaddr } from '@multiformats/multiaddr';
import type { Multiaddr } from '@multiformats/multiaddr';
import { InvalidPeerAddressError } from './errors.js';

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/\s]+)):(\d{1,5})$/;

/** Parses a multiaddr string or `host:port` (IPv6 in brackets; port 0 to listen on any) into a TCP multiaddr; throws InvalidPeerAddressError. */
export function parsePeerAddress(address: string): Multiaddr {
  if (address.startsWith('/')) {
    try {
      return multiaddr(address);
    } catch (error) {
      throw new InvalidPeerAddressError(address, { cause: error });
    }
  }
  const match = HOST_PORT.exec(address);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !(port >= 0 && port < 65_536)) throw new InvalidPeerAddressError(address);
  const family = isIP(host);
  const protocol = family === 4 ? 'ip4' : family === 6 ? 'ip6' : 'dns';
  return multiaddr(`/${protocol}/${host}/tcp/${port}`);
}

/** The peer id an address names (its last `/p2p/` component), if any. */
export function peerIdOfAddress(address: Multiaddr): string | undefined {
  return address.getComponents().findLast((component) => component.name === 'p2p')?.value;
}
