// A data-plane worker's side of the IPC channel to its primary: it answers the primary's calls
// (worker-calls.ts), says when it serves, and stops when told to or when the primary is gone.
//
// Opened first thing in the worker, before its node is built: a call that arrives before the
// handler of its kind is set (a purge sent while the worker is still starting) is held and run once
// the handler is set, so a worker never misses one. The worker ignores SIGINT, SIGTERM and SIGHUP:
// a terminal's Ctrl-C reaches every process of the group, and only the primary decides when workers
// stop and what a reload changes. A worker whose primary died (kill -9 included) stops as well: with
// the OS handing out connections it would otherwise go on serving, unsupervised, on the port.
import cluster from 'node:cluster';
import { TransportError, type TransportErrorCode } from '../../../cluster/index.js';
import { isWorkerMessage, type CallMessage, type ClusterView, type PeerReplyMessage, type ReplyMessage, type WarmWrite } from './worker-messages.js';

/** A peer request the primary has not answered within its timeout and this margin is given up here. */
const PEER_REPLY_MARGIN_MS = 1_000;

export type CallHandler = (payload: unknown) => unknown;

export class PrimaryChannel {
  readonly #handlers = new Map<string, CallHandler>();
  readonly #held: CallMessage[] = [];
  #stop: (() => Promise<void>) | undefined;
  #stopping = false;
  #warmJoined: () => void = () => undefined;
  /** Resolves when the primary says the warm tier it owns is indexed and may be read. */
  readonly warmJoined = new Promise<void>((resolve) => (this.#warmJoined = resolve));
  #caughtUp = false;
  #onClusterView: ((view: ClusterView) => void) | undefined;
  #firstClusterView: (view: ClusterView) => void = () => undefined;
  #latestClusterView: ClusterView | undefined;
  /** Resolves with the primary's first cluster view (strong mode: sent before anything a worker serves). */
  readonly clusterView = new Promise<ClusterView>((resolve) => (this.#firstClusterView = resolve));
  readonly #peerReplies = new Map<number, { resolve: (body: Uint8Array) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #nextPeerRequest = 1;

  /** Opens the channel; only in a worker forked by node:cluster. */
  static open(): PrimaryChannel {
    if (!cluster.isWorker || process.send === undefined) throw new Error('PrimaryChannel.open() runs in a cluster worker only');
    return new PrimaryChannel();
  }

  private constructor() {
    process.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.svc === 'call') this.#receive(message);
      else if (message.svc === 'warm-joined') this.#warmJoined();
      else if (message.svc === 'caught-up') this.#caughtUp = true;
      else if (message.svc === 'cluster-view') this.#viewed(message.view);
      else if (message.svc === 'peer-reply') this.#peerReplied(message);
      else if (message.svc === 'stop') this.#stopAndExit();
    });
    process.on('disconnect', () => this.#stopAndExit());
    // A message that reaches a worker before it listens is lost (an ES module's body runs after its
    // imports load): the primary holds what it sends until it hears this.
    process.send?.({ svc: 'listening' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
  }

  /** Sets the handler of `kind` and runs the calls of that kind held until now, in their order. */
  handle(kind: string, handler: CallHandler): void {
    this.#handlers.set(kind, handler);
    const held = this.#held.filter((call) => call.kind === kind);
    for (const call of held) this.#held.splice(this.#held.indexOf(call), 1);
    for (const call of held) void this.#run(call, handler);
  }

  /** Whether the primary said its cluster member has caught up (a node without one never says so). */
  get caughtUp(): boolean {
    return this.#caughtUp;
  }

  /** Calls `listener` with the cluster as the primary's member sees it: the latest view now, then every change. */
  onClusterView(listener: (view: ClusterView) => void): void {
    this.#onClusterView = listener;
    if (this.#latestClusterView !== undefined) listener(this.#latestClusterView);
  }

  /**
   * Sends a request to a peer through the primary's cluster member; rejects as the transport would
   * (TransportError), and with code `timeout` when no answer comes back in time.
   */
  askPeer(member: string, channel: string, body: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    if (!process.connected) return Promise.reject(new TransportError('unreachable', 'the primary is gone'));
    const id = this.#nextPeerRequest++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#peerReplies.delete(id);
        reject(new TransportError('timeout', `no answer from ${member} through the primary within ${timeoutMs} ms`));
      }, timeoutMs + PEER_REPLY_MARGIN_MS);
      this.#peerReplies.set(id, { resolve, reject, timer });
      process.send?.({ svc: 'peer-request', id, member, channel, body, timeoutMs });
    });
  }

  /** What the worker does before it exits, when told to stop or when its primary is gone. */
  onStop(stop: () => Promise<void>): void {
    this.#stop = stop;
  }

  /** Tells the primary why this worker could not start (it exits next): the primary's start fails with it. */
  reportFailed(message: string): void {
    process.send?.({ svc: 'failed', message });
  }

  /** Sends a change to the warm tier to the primary, which owns it; dropped once the primary is gone. */
  sendWarm(write: WarmWrite): void {
    if (process.connected) process.send?.(write);
  }

  /** Tells the primary that this worker serves. */
  reportReady(): void {
    process.send?.({ svc: 'ready' });
  }

  #viewed(view: ClusterView): void {
    this.#latestClusterView = view;
    this.#firstClusterView(view);
    this.#onClusterView?.(view);
  }

  #peerReplied(reply: PeerReplyMessage): void {
    const pending = this.#peerReplies.get(reply.id);
    if (pending === undefined) return;
    this.#peerReplies.delete(reply.id);
    clearTimeout(pending.timer);
    if (reply.body !== undefined) pending.resolve(reply.body);
    else pending.reject(new TransportError((reply.error?.code ?? 'unreachable') as TransportErrorCode, reply.error?.message ?? 'the peer did not answer'));
  }

  #receive(call: CallMessage): void {
    const handler = this.#handlers.get(call.kind);
    if (handler === undefined) this.#held.push(call);
    else void this.#run(call, handler);
  }

  async #run(call: CallMessage, handler: CallHandler): Promise<void> {
    let reply: ReplyMessage;
    try {
      reply = { svc: 'reply', id: call.id, result: await handler(call.payload) };
    } catch (error) {
      reply = { svc: 'reply', id: call.id, error: error instanceof Error ? error.message : String(error) };
    }
    // The channel may have closed meanwhile (the primary is gone); the worker is stopping then.
    if (process.connected) process.send?.(reply);
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
