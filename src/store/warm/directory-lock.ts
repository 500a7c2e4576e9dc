// One process per warm directory. Two svc processes on one warm tier would each index it, evict by
// their own bounds and delete each other's records; lmdb allows several processes in one environment,
// so it does not prevent this. The lock is a Unix socket in the directory that the holder listens
// on: the kernel closes it when the holder dies, however it dies (kill -9 included), so a lock left
// behind is recognised at once (nobody answers) and taken over, and a live holder answers with its
// pid, which the refusal names. Unlike a pid file, a recycled pid or another container's process
// (its own pid namespace, the same volume) is never mistaken for the holder.
import { mkdir, rmdir, stat, unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The socket's name in the warm directory. */
export const LOCK_FILE_NAME = 'svc.lock';

/** Longest socket path every supported system binds (macOS: 104 bytes with the NUL; Linux: 108). */
const MAX_SOCKET_PATH_BYTES = 103;
/** A takeover older than this was left by a process that died in the middle of it. */
const STALE_TAKEOVER_MS = 5_000;
/** How long a probe of the socket may take; a live holder answers at once. */
const PROBE_TIMEOUT_MS = 2_000;
const ATTEMPTS = 20;

export class WarmDirectoryLockedError extends Error {
  override readonly name = 'WarmDirectoryLockedError';
  readonly code = 'warm_directory_locked';
  constructor(directory: string, holder: string) {
    super(`${directory} is in use by another svc process (${holder}); two processes cannot share one warm directory`);
  }
}

export interface DirectoryLock {
  /** Stops answering and removes the socket. */
  release(): Promise<void>;
}

/** The socket's path as bound: relative to the working directory when an absolute one is too long. */
function socketPath(directory: string): string {
  const absolute = join(directory, LOCK_FILE_NAME);
  const shorter = relative(process.cwd(), absolute);
  const path = Buffer.byteLength(absolute) <= Buffer.byteLength(shorter) ? absolute : shorter;
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`the lock socket path ${absolute} is longer than ${MAX_SOCKET_PATH_BYTES} bytes: use a shorter warm directory path`);
  }
  return path;
}

/** `pid N` of a live holder, or undefined when nobody listens there (the holder died). */
async function probe(path: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(PROBE_TIMEOUT_MS, () => socket.destroy());
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(`pid ${answer.trim() || 'unknown'}`));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(undefined);
      else reject(error);
    });
  });
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Removes a dead holder's socket. Only one process may do so at a time (a directory made with mkdir,
 * which is atomic): otherwise one could remove the socket another had just bound in its place.
 */
async function takeOver(path: string): Promise<void> {
  const takeover = `${path}.takeover`;
  try {
    await mkdir(takeover);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const age = Date.now() - (await stat(takeover).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
    if (age > STALE_TAKEOVER_MS) await rmdir(takeover).catch(() => undefined);
    return;
  }
  try {
    if ((await probe(path)) === undefined) await unlink(path).catch(() => undefined);
  } finally {
    await rmdir(takeover);
  }
}

/** Takes the warm directory's lock (creating the directory); rejects with WarmDirectoryLockedError. */
export async function lockDirectory(directory: string): Promise<DirectoryLock> {
  await mkdir(directory, { recursive: true });
  const path = socketPath(directory);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const server = createServer((socket) => socket.end(`${process.pid}\n`));
    try {
      await listen(server, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      const holder = await probe(path);
      if (holder !== undefined) throw new WarmDirectoryLockedError(directory, holder);
      await takeOver(path);
      // Another process may be taking over at the same moment: the next attempt finds out.
      await sleep(10 * attempt);
      continue;
    }
    // A lock must not keep a process alive that has nothing else to do.
    server.unref();
    return {
      release: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await unlink(path).catch(() => undefined);
      },
    };
  }
  throw new WarmDirectoryLockedError(directory, 'another process keeps taking it over');
}
