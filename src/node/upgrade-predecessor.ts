// The predecessor's side of an upgrade (upgrade-protocol.ts; docs/operations.md "Upgrading without
// downtime"): a running node starts its successor, the same command again (so the build now on disk
// is what starts), hands it its listening sockets as they are, and serves on while it starts. When the
// successor asks, the node stops taking admin requests (the successor answers the next ones, from the
// same socket) and lets go of its directory: the warm tier flushed and closed, the journal closed, the
// lock released; its data plane serves on from the hot tier and the origin. Once the successor says
// it serves, the node stops taking connections (no connection waiting in a socket's queue is lost:
// the successor holds the same sockets) and drains. A successor that does not get to serve is ended,
// and the node serves on, as it was unless the successor had taken the directory already.
//
// The descriptors are read from Node's internals (listeners.ts `listeningFd`). With
// SVC_NODE_INTERNALS=off none is handed over: the successor opens sockets of its own on the same
// addresses, beside this node's (which are SO_REUSEPORT for it, listeners.ts `listenChecked`), and
// what waits in this node's queues when it closes them is reset unless Linux moves it to the
// successor's (`net.ipv4.tcp_migrate_req=1`).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Server as NetServer } from 'node:net';
import type { Server } from 'node:http';
import type { Logger } from '../observe/logger.js';
import { listen, listeningFd } from './listeners.js';
import { nodeInternalsAllowed } from '../runtime/node-internals.js';
import { FIRST_HANDED_FD, isSuccessorMessage, UPGRADE_ENV, type HandedOver, type PredecessorMessage } from './upgrade-protocol.js';

/** How long a successor may take to serve: a first start of the data-plane threads can be slow. */
export const UPGRADE_START_TIMEOUT_MS = 60_000;
/** How long admin requests in progress get to finish once the successor takes the admin socket. */
const ADMIN_HANDOVER_MS = 5_000;
/** How often connections that turned idle are closed while the admin listener is handed over. */
const ADMIN_IDLE_SWEEP_MS = 50;

export interface PredecessorParts {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  admin: { server: Server; address: string; url: string };
  data: { address: string; url: string; fds: () => Promise<number[]> };
  /** Lets go of the node's directory: the warm tier flushed and closed, the journal closed, the lock released. */
  releaseDirectory: () => Promise<void>;
}

export type UpgradeOutcome = 'handed-over' | 'failed';

/**
 * Starts `command` as this node's successor; resolves 'handed-over' once it serves (the node must
 * then stop taking connections, drain and exit), or 'failed' when it did not get to serve (logged).
 */
export async function startSuccessor(parts: PredecessorParts, command: readonly string[]): Promise<UpgradeOutcome> {
  const { logger } = parts;
  let successor: ChildProcess;
  try {
    successor = await spawnSuccessor(parts, command);
  } catch (error) {
    logger.error({ err: error }, 'upgrade failed: the successor could not be started: this process serves on');
    return 'failed';
  }
  const pid = successor.pid!;
  // `sockets`: inherited (the descriptors handed over) or reuseport (opened by the successor beside these).
  logger.info({ successor: pid, command: command.join(' '), sockets: nodeInternalsAllowed(parts.env) ? 'inherited' : 'reuseport' }, 'upgrade: started a successor');
  let releasing: Promise<void> | undefined;
  const exited = once(successor, 'exit').then(([code, signal]) => (signal === null ? `exited with status ${String(code)}` : `ended by ${String(signal)}`));
  const serving = new Promise<void>((resolve) => {
    successor.on('message', (message: unknown) => {
      if (!isSuccessorMessage(message)) return;
      if (message.kind === 'serving') {
        resolve();
        return;
      }
      releasing ??= release(parts).then(() => {
        const answer: PredecessorMessage = { kind: 'released' };
        if (successor.connected) successor.send(answer);
      });
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`did not serve within ${UPGRADE_START_TIMEOUT_MS} ms`), UPGRADE_START_TIMEOUT_MS);
  });
  const outcome = await Promise.race([serving.then(() => undefined), exited, timedOut]);
  clearTimeout(timer);
  if (outcome === undefined) {
    // The successor's exit is no longer this process's concern, nor a reason to stay alive.
    successor.unref();
    successor.removeAllListeners('message');
    if (successor.connected) successor.disconnect();
    logger.info({ successor: pid }, 'upgrade: the successor serves: this process stops taking connections and drains');
    return 'handed-over';
  }
  if (successor.exitCode === null && successor.signalCode === null) {
    successor.kill('SIGKILL');
    await exited;
  }
  await releasing;
  if (releasing === undefined) {
    logger.error({ successor: pid, reason: outcome }, 'upgrade failed: the successor did not get to serve: this process serves on');
    return 'failed';
  }
  // The successor took the admin socket with it: this process opens the address again.
  const reopened = await listen(parts.admin.server, 'admin', new URL(parts.admin.url).host, { reusePort: !nodeInternalsAllowed(parts.env) }).then(
    () => true,
    (error: unknown) => {
      logger.error({ err: error }, 'upgrade: the admin listener could not be opened again');
      return false;
    },
  );
  logger.error(
    { successor: pid, reason: outcome, admin_reopened: reopened },
    'upgrade failed after the successor took the warm directory: this process serves on from its hot tier and the origin, without the warm tier and invalidations, until it is restarted',
  );
  return 'failed';
}

async function spawnSuccessor(parts: PredecessorParts, command: readonly string[]): Promise<ChildProcess> {
  // The successor's environment is this one: it also knows that nothing is handed over then.
  const descriptors = nodeInternalsAllowed(parts.env);
  const adminFds = descriptors ? [listeningFd(parts.admin.server)] : [];
  const dataFds = descriptors ? await parts.data.fds() : [];
  const fds = [...adminFds, ...dataFds];
  const at = (index: number): number => FIRST_HANDED_FD + index;
  const handed: HandedOver = {
    from: process.pid,
    admin: { address: parts.admin.address, url: parts.admin.url, fds: adminFds.map((_fd, index) => at(index)) },
    data: { address: parts.data.address, url: parts.data.url, fds: dataFds.map((_fd, index) => at(adminFds.length + index)) },
  };
  const [file, ...args] = command;
  // Its output is this process's (the same journal or terminal); the IPC channel is descriptor 3.
  const child = spawn(file!, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc', ...fds], env: { ...parts.env, [UPGRADE_ENV]: JSON.stringify(handed) } });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return child;
}

/**
 * What the successor asks for before it opens the warm tier: admin requests stop here (none is taken
 * after, those in progress finish), then the node's directory is let go of.
 */
async function release(parts: PredecessorParts): Promise<void> {
  await stopAdmin(parts.admin.server);
  await parts.releaseDirectory().catch((error: unknown) => parts.logger.error({ err: error }, 'upgrade: letting go of the warm directory failed'));
  parts.logger.info('upgrade: the admin listener and the warm directory are the successor\'s now');
}

/**
 * Stops taking admin connections (the successor takes them from the same socket once it serves, or
 * with SVC_NODE_INTERNALS=off from its own, open since it asked for the directory) and
 * resolves once this node's own ended. Idle ones are closed as they turn idle: an invalidation taken
 * here after the successor read the journal would be lost to it. A client whose next request meets
 * that close sends it again on a new connection, as HTTP clients do on a kept-alive one.
 */
async function stopAdmin(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), ADMIN_IDLE_SWEEP_MS);
    const cut = setTimeout(() => server.closeAllConnections(), ADMIN_HANDOVER_MS);
    server.closeIdleConnections();
    NetServer.prototype.close.call(server, () => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
  });
}
