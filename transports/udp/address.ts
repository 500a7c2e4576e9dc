// Transport addresses of the UDP transport: `host:port`, IPv6 hosts in brackets (`[::1]:7946`), as
// in the configuration file. The same port number names the UDP socket and the HTTP(S) listener
// (memberlist uses one port for UDP and TCP), so one address reaches both paths.

import { isIPv6 } from 'node:net';
import { InvalidAddressError } from './errors.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export function parseAddress(address: string): HostPort {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) throw new InvalidAddressError(address, 'expected host:port');
  let host = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) throw new InvalidAddressError(address, 'unclosed IPv6 bracket');
    host = host.slice(1, -1);
    if (!isIPv6(host)) throw new InvalidAddressError(address, 'not an IPv6 address in the brackets');
  } else if (host.includes(':')) {
    throw new InvalidAddressError(address, 'IPv6 hosts go in brackets, like [::1]:7946');
  }
  if (!/^\d{1,5}$/.test(portText)) throw new InvalidAddressError(address, 'the port is not a number');
  const port = Number(portText);
  if (port > 65535) throw new InvalidAddressError(address, 'the port is above 65535');
  if (host === '') throw new InvalidAddressError(address, 'the host is empty');
  return { host, port };
}

export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Whether `host` means "every interface", which peers cannot use to reach this node. */
export function isUnspecifiedHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}
