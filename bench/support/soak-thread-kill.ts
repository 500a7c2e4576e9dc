// Loaded into the soak's `svc serve` with `node --import` (bench/support/soak-node.ts), never by svc
// itself: svc has no way to kill one of its own data-plane threads from outside, and must not have
// one. Node runs a preload in the main thread and again in every worker thread (a Worker inherits
// execArgv), so this module has a side in each, talking over a BroadcastChannel:
//
// - in each data-plane thread (a worker whose workerData has the supervisor's `slot`), it keeps the
//   TCP connections the thread accepted (diagnostics_channel `net.server.socket`), and when told to
//   die it reports their client ports, then throws an error nothing catches: the thread crashes as it
//   would on a bug, and svc's supervisor logs it and starts it again;
// - in the main thread, it keeps the live data-plane threads and, on the soak's IPC message `kill`,
//   tells the one started first to die, and sends the soak its report (`killed`, with the ports).
//
// The ports let the soak tell a failed request on a connection the killed thread held from any other.
import { isMainThread, threadId, workerData } from 'node:worker_threads';
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

const CHANNEL_NAME = 'svc-soak-thread-kill';

/** Between the threads of the process. */
type ThreadMessage = { kind: 'hello'; threadId: number } | { kind: 'kill'; threadId: number } | { kind: 'killed'; threadId: number; ports: number[] };

/** From the soak to the main thread, and back. */
export type SoakKillRequest = { kind: 'kill' };
export type SoakKillReport = { kind: 'killed'; threadId: number; ports: number[] } | { kind: 'no-thread' };

// Unref'd: it must not keep a stopping process, or a finished thread, alive.
const channel = new BroadcastChannel(CHANNEL_NAME);
channel.unref();
const post = (message: ThreadMessage): void => channel.postMessage(message);

function mainThreadSide(): void {
  const send = process.send?.bind(process);
  if (send === undefined) return;
  const live = new Set<number>();
  channel.onmessage = (event) => {
    const message = (event as { data: ThreadMessage }).data;
    if (message.kind === 'hello') live.add(message.threadId);
    else if (message.kind === 'killed') {
      live.delete(message.threadId);
      send({ kind: 'killed', threadId: message.threadId, ports: message.ports } satisfies SoakKillReport);
    }
  };
  process.on('message', (request: SoakKillRequest) => {
    if (request.kind !== 'kill') return;
    // Thread ids grow: the smallest is the thread that has served longest.
    const oldest = Math.min(...live);
    if (Number.isFinite(oldest)) post({ kind: 'kill', threadId: oldest });
    else send({ kind: 'no-thread' } satisfies SoakKillReport);
  });
  // The soak's IPC channel must not keep svc serve alive once it is told to stop.
  process.channel?.unref();
}

function dataPlaneThreadSide(): void {
  const accepted = new Set<Socket>();
  subscribe('net.server.socket', (message) => {
    const socket = (message as { socket: Socket }).socket;
    // TCP clients only: the sibling threads' Unix sockets have no port.
    if (socket.remotePort === undefined) return;
    accepted.add(socket);
    socket.once('close', () => accepted.delete(socket));
  });
  channel.onmessage = (event) => {
    const message = (event as { data: ThreadMessage }).data;
    if (message.kind !== 'kill' || message.threadId !== threadId) return;
    post({ kind: 'killed', threadId, ports: [...accepted].map((socket) => socket.remotePort!) });
    throw new Error('killed by the soak (bench/support/soak-thread-kill.ts)');
  };
  post({ kind: 'hello', threadId });
}

if (isMainThread) mainThreadSide();
else if (typeof (workerData as { slot?: unknown } | null)?.slot === 'number') dataPlaneThreadSide();
