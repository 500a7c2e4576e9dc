// Ports for child processes, which must be told theirs up front. They are drawn from below the
// system's ephemeral range: a port from the ephemeral range, once released, can be taken as the
// local end of any outgoing connection (a load test's, or svc's own to its origin) before the child
// binds it, or again between a SIGKILL and the restart that reuses it. A drawn port is checked free
// for TCP and UDP (cluster transports bind both) and never handed out twice by one process.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port drawn: above the registered ports most local services use. */
const LOWEST_PORT = 20_000;
/** Linux's default ephemeral range starts here; other systems start higher (IANA: 49152). */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const ATTEMPTS = 50;

const handedOut = new Set<number>();

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

function bindsTcp(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function bindsUdp(port: number): Promise<boolean> {
  const socket = createSocket('udp4');
  return new Promise((resolve) => {
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (high - LOWEST_PORT));
    if (handedOut.has(port)) continue;
    if ((await bindsTcp(port)) && (await bindsUdp(port))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found in ${ATTEMPTS} draws from ${LOWEST_PORT}-${high - 1}`);
}
