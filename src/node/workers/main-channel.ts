// A data-plane worker thread's side of its channel to the main thread: it answers the main thread's
// calls (worker-calls.ts), says when it serves, and stops when told to.
//
// Opened first thing in the worker, before its data plane is built: a call that arrives before the
// handler of its kind is set (a purge sent while the worker is still starting) is held and run once
// the handler is set, so a worker never misses one. Every message is checked against the table of
// thread-messages.ts; one that does not fit is answered with an error (a call) or dropped.
import { parentPort } from 'node:worker_threads';
import { TransportError, type TransportErrorCode } from '../../../cluster/index.js';
import {
  checkCall,
  checkDown,
  threadError,
  type CallName,
  type CallPayload,
  type CallResult,
  type ClusterView,
  type DownMessage,
  type ServedReport,
  type UpMessage,
  type WarmWrite,
} from './thread-messages.js';

/** A peer request the main thread has not answered within its timeout and this margin is given up here. */
const PEER_REPLY_MARGIN_MS = 1_000;

type CallMessage = Extract<DownMessage, { kind: 'call' }>;
type Handler = (payload: unknown) => unknown;

export class MainChannel {
  readonly #port = parentPort!;
  readonly #handlers = new Map<CallName, Handler>();
  readonly #held: CallMessage[] = [];
  #stop: (() => Promise<void>) | undefined;
  #stopping = false;
  #onClusterView: ((view: ClusterView) => void) | undefined;
  #firstClusterView: (view: ClusterView) => void = () => undefined;
  #latestClusterView: ClusterView | undefined;
  /** Resolves with the main thread's first cluster view (strong mode: sent before anything a worker serves). */
  readonly clusterView = new Promise<ClusterView>((resolve) => (this.#firstClusterView = resolve));
  readonly #peerReplies = new Map<number, { resolve: (body: Uint8Array) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #nextPeerRequest = 1;
  /** Told of a message that does not fit the table (a bug on one side). */
  #onMalformed: (issue: string) => void = () => undefined;

  /** Opens the channel; only in a worker thread. */
  static open(): MainChannel {
    if (parentPort === null) throw new Error('MainChannel.open() runs in a worker thread only');
    return new MainChannel();
  }

  private constructor() {
    this.#port.on('message', (data: unknown) => {
      const checked = checkDown(data);
      if (!checked.ok) {
        this.#onMalformed(checked.issue);
        return;
      }
      const message = checked.message;
      switch (message.kind) {
        case 'call':
          this.#receive(message);
          return;
        case 'cluster-view':
          this.#viewed(message.view);
          return;
        case 'peer-reply':
          this.#peerReplied(message);
          return;
        case 'stop':
          this.#stopAndExit();
      }
    });
  }

  /** Where messages that do not fit the table are reported (the worker's logger, once it has one). */
  onMalformed(report: (issue: string) => void): void {
    this.#onMalformed = report;
  }

  /** Sets the handler of `call` and runs the calls of that kind held until now, in their order. */
  handle<K extends CallName>(call: K, handler: (payload: CallPayload<K>) => CallResult<K> | Promise<CallResult<K>>): void {
    this.#handlers.set(call, handler as Handler);
    const held = this.#held.filter((message) => message.call === call);
    for (const message of held) this.#held.splice(this.#held.indexOf(message), 1);
    for (const message of held) void this.#run(message, handler as Handler);
  }

  /** Calls `listener` with the cluster as the main thread's member sees it: the latest view now, then every change. */
  onClusterView(listener: (view: ClusterView) => void): void {
    this.#onClusterView = listener;
    if (this.#latestClusterView !== undefined) listener(this.#latestClusterView);
  }

  /**
   * Sends a request to a peer through the main thread's cluster member; rejects as the transport
   * would (TransportError), and with code `timeout` when no answer comes back in time.
   */
  askPeer(member: string, channel: string, body: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    const id = this.#nextPeerRequest++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#peerReplies.delete(id);
        reject(new TransportError('timeout', `no answer from ${member} through the main thread within ${timeoutMs} ms`));
      }, timeoutMs + PEER_REPLY_MARGIN_MS);
      this.#peerReplies.set(id, { resolve, reject, timer });
      this.#send({ kind: 'peer-request', id, member, channel, body, timeoutMs });
    });
  }

  /** What the worker does before it exits, when told to stop. */
  onStop(stop: () => Promise<void>): void {
    this.#stop = stop;
  }

  /** Tells the main thread why this worker could not start (it exits next): the node's start fails with it. */
  reportFailed(error: unknown): void {
    this.#send({ kind: 'failed', error: threadError(error) });
  }

  /** Sends a change to the warm tier to the main thread, which owns it. */
  sendWarm(write: WarmWrite): void {
    this.#send(write);
  }

  /** Reports hits on refresh-enabled routes to the main thread's background refresher. */
  sendServed(report: ServedReport): void {
    this.#send(report);
  }

  /** Tells the main thread that this worker serves. */
  reportReady(): void {
    this.#send({ kind: 'ready' });
  }

  #send(message: UpMessage): void {
    this.#port.postMessage(message);
  }

  #viewed(view: ClusterView): void {
    this.#latestClusterView = view;
    this.#firstClusterView(view);
    this.#onClusterView?.(view);
  }

  #peerReplied(reply: Extract<DownMessage, { kind: 'peer-reply' }>): void {
    const pending = this.#peerReplies.get(reply.id);
    if (pending === undefined) return;
    this.#peerReplies.delete(reply.id);
    clearTimeout(pending.timer);
    if (reply.body !== undefined) pending.resolve(reply.body);
    else pending.reject(new TransportError((reply.error?.code ?? 'unreachable') as TransportErrorCode, reply.error?.message ?? 'the peer did not answer'));
  }

  #receive(message: CallMessage): void {
    const handler = this.#handlers.get(message.call);
    if (handler === undefined) this.#held.push(message);
    else void this.#run(message, handler);
  }

  async #run(message: CallMessage, handler: Handler): Promise<void> {
    let reply: UpMessage;
    const payload = checkCall(message.call, 'payload', message.payload);
    try {
      if (!payload.ok) throw Object.assign(new Error(`the payload of ${message.call} does not fit: ${payload.issue}`), { code: 'malformed' });
      reply = { kind: 'reply', id: message.id, result: (await handler(payload.message)) ?? null };
    } catch (error) {
      reply = { kind: 'reply', id: message.id, error: threadError(error) };
    }
    this.#send(reply);
  }

  #stopAndExit(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    const stop = this.#stop ?? (() => Promise.resolve());
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  }
}
