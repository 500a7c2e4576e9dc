// Ports for child processes, which must be told theirs up front. They are drawn from below the
// system's ephemeral range: a port from the ephemeral range, once released, can be taken as the
// local end of any outgoing connection (a load test's, or svc's own to its origin) before the child
// binds it, or again between a SIGKILL and the restart that reuses it. A drawn port is checked free
// for TCP and UDP (cluster transports bind both) and reserved on this machine for the life of the
// process that drew it: a file per port in one directory, created only if absent. The other test
// files, and a second `npm test` beside this one, draw from the same range; without the
// reservation one of them could bind a port another test's node had released only to restart on it.
import { createSocket } from 'node:dgram';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Lowest port drawn: above the registered ports most local services use. */
const LOWEST_PORT = 20_000;
/** Linux's default ephemeral range starts here; other systems start higher (IANA: 49152). */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const ATTEMPTS = 50;

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

const errorCode = (error: unknown): unknown => (error as NodeJS.ErrnoException).code;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is another user's.
    return errorCode(error) === 'EPERM';
  }
}

/** The pid a reservation file names, or undefined once it is gone. */
function ownerOf(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8'));
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Ports reserved on this machine, each by one process at a time: a file per port in `directory`,
 * created only if absent and holding the pid that reserved it, removed when that process exits.
 */
export class PortReservations {
  readonly #held = new Set<number>();

  constructor(readonly directory: string) {
    mkdirSync(directory, { recursive: true });
    process.once('exit', () => {
      for (const port of this.#held) this.release(port);
    });
  }

  /** Reserves `port` for this process; false when another live process holds it. */
  reserve(port: number): boolean {
    const file = this.#fileOf(port);
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      this.#held.add(port);
      return true;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    const owner = ownerOf(file);
    if (owner === undefined || alive(owner)) return false;
    // The process that reserved it was killed before it could remove the file. The file is renamed
    // away first (one process wins a rename); the winner checks that it took the dead process's
    // file, not a reservation made meanwhile, which it then puts back.
    const taken = `${file}.${process.pid}`;
    try {
      renameSync(file, taken);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      throw error;
    }
    if (ownerOf(taken) !== owner) {
      putBack(taken, file);
      return false;
    }
    unlinkSync(taken);
    return this.reserve(port);
  }

  release(port: number): void {
    if (!this.#held.delete(port)) return;
    try {
      unlinkSync(this.#fileOf(port));
    } catch {
      // Already reclaimed by another process: nothing to release.
    }
  }

  #fileOf(port: number): string {
    return join(this.directory, String(port));
  }
}

/** Restores a live reservation taken by mistake (unless a third process reserved the port meanwhile). */
function putBack(taken: string, file: string): void {
  try {
    linkSync(taken, file);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  }
  unlinkSync(taken);
}

/** Shared by every test and benchmark process on this machine, a second `npm test` included. */
const reservations = new PortReservations(join(tmpdir(), 'svc-test-ports'));

export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (high - LOWEST_PORT));
    // A port this process reserved already is held by a live process: it is not drawn twice.
    if (!reservations.reserve(port)) continue;
    if ((await bindsTcp(port)) && (await bindsUdp(port))) return port;
    reservations.release(port);
  }
  throw new Error(`no free port found in ${ATTEMPTS} draws from ${LOWEST_PORT}-${high - 1}`);
}
