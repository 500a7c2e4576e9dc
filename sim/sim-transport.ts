// The Transport one simulated node instance sees. It holds the node's handlers and its outstanding
// requests; moving bytes between nodes (latency, loss, partitions) is the network's business, reached
// through the small SimWire interface so this file does not depend on the network's internals.

import type { Clock, TimerHandle } from '../cluster/clock.js';
import {
  TransportError,
  type Address,
  type BroadcastHandler,
  type Broadcaster,
  type PacketHandler,
  type RequestHandler,
  type RequestOptions,
  type Transport,
  type TransportErrorCode,
} from '../cluster/transport.js';
import { PacketTooLargeError } from './errors.js';

/** What a SimTransport needs from the network that carries its traffic. */
export interface SimWire {
  sendPacket(from: SimTransport, to: Address, data: Uint8Array): void;
  sendRequest(request: OutgoingRequest): void;
  publish(from: SimTransport, topic: string, data: Uint8Array): void;
  /** Tells the clock a promise was settled, so continuations run before time moves on. */
  noteAsyncWork(): void;
}

/** Where a transport is in its life: only a `started` transport sends and receives. */
export type SimTransportState = 'new' | 'started' | 'stopped' | 'crashed';

/** A request this node sent and has not seen settled yet. */
export class OutgoingRequest {
  private settled = false;
  private timer: TimerHandle | null = null;
  private abortListener: (() => void) | null = null;

  constructor(
    readonly caller: SimTransport,
    readonly to: Address,
    readonly channel: string,
    readonly body: Uint8Array,
    private readonly options: RequestOptions,
    private readonly resolvePromise: (body: Uint8Array) => void,
    private readonly rejectPromise: (error: TransportError) => void,
  ) {}

  get isSettled(): boolean {
    return this.settled;
  }

  /** Arms the caller-side timeout and abort listener; the timer belongs to the caller's clock. */
  arm(clock: Clock): void {
    this.timer = clock.setTimer(this.options.timeoutMs, () => {
      this.timer = null;
      this.fail('timeout', `no answer from ${this.to} on ${this.channel} within ${this.options.timeoutMs} ms`);
    });
    const signal = this.options.signal;
    if (signal !== undefined) {
      this.abortListener = () => this.fail('aborted', `request to ${this.to} on ${this.channel} was aborted`);
      signal.addEventListener('abort', this.abortListener, { once: true });
    }
  }

  succeed(body: Uint8Array): void {
    if (!this.finish()) return;
    this.resolvePromise(body);
  }

  fail(code: TransportErrorCode, message: string): void {
    if (!this.finish()) return;
    this.rejectPromise(new TransportError(code, message));
  }

  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.timer !== null) this.caller.clock.clearTimer(this.timer);
    if (this.abortListener !== null) this.options.signal?.removeEventListener('abort', this.abortListener);
    this.caller.settled(this);
    return true;
  }
}

class SimBroadcaster implements Broadcaster {
  constructor(private readonly transport: SimTransport) {}

  publish(topic: string, data: Uint8Array): Promise<void> {
    this.transport.publish(topic, data);
    return Promise.resolve();
  }

  subscribe(topic: string, handler: BroadcastHandler): void {
    this.transport.subscribe(topic, handler);
  }
}

export class SimTransport implements Transport {
  readonly broadcaster?: Broadcaster;
  private lifecycle: SimTransportState = 'new';
  private packetHandler: PacketHandler | null = null;
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly subscriptions = new Map<string, BroadcastHandler[]>();
  private readonly outgoing = new Set<OutgoingRequest>();
  private readonly serving = new Set<AbortController>();

  constructor(
    readonly localAddress: Address,
    readonly maxPacketBytes: number,
    /** This node instance's clock: request timeouts wait while the node is paused. */
    readonly clock: Clock,
    private readonly wire: SimWire,
    nativeBroadcast: boolean,
  ) {
    if (nativeBroadcast) this.broadcaster = new SimBroadcaster(this);
  }

  get state(): SimTransportState {
    return this.lifecycle;
  }

  /** Whether traffic addressed to this node reaches its handlers. */
  get receiving(): boolean {
    return this.lifecycle === 'started';
  }

  start(): Promise<void> {
    if (this.lifecycle === 'new') this.lifecycle = 'started';
    return Promise.resolve();
  }

  stop(): Promise<void> {
    if (this.lifecycle === 'started' || this.lifecycle === 'new') {
      this.lifecycle = 'stopped';
      this.abortEverything('closed');
    }
    return Promise.resolve();
  }

  /** The process died: nothing more is sent, received or settled, as no code of it runs any more. */
  crash(): void {
    this.lifecycle = 'crashed';
    this.outgoing.clear();
    for (const controller of this.serving) controller.abort();
    this.serving.clear();
  }

  sendPacket(to: Address, data: Uint8Array): void {
    if (data.byteLength > this.maxPacketBytes) {
      throw new PacketTooLargeError(data.byteLength, this.maxPacketBytes, this.localAddress);
    }
    if (this.lifecycle !== 'started') return;
    this.wire.sendPacket(this, to, data);
  }

  onPacket(handler: PacketHandler): void {
    this.packetHandler = handler;
  }

  request(to: Address, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    if (this.lifecycle !== 'started') {
      return Promise.reject(new TransportError('closed', `transport of ${this.localAddress} is not running`));
    }
    if (options.signal?.aborted === true) {
      return Promise.reject(new TransportError('aborted', `request to ${to} on ${channel} was aborted`));
    }
    return new Promise<Uint8Array>((resolve, reject) => {
      const request = new OutgoingRequest(this, to, channel, body.slice(), options, resolve, reject);
      this.outgoing.add(request);
      request.arm(this.clock);
      this.wire.sendRequest(request);
    });
  }

  onRequest(channel: string, handler: RequestHandler): void {
    this.requestHandlers.set(channel, handler);
  }

  /** Called by the network when a packet reaches this node. */
  deliverPacket(from: Address, data: Uint8Array): void {
    if (this.lifecycle === 'started' && this.packetHandler !== null) this.packetHandler(from, data);
  }

  /**
   * Called by the network when a request reaches this node: runs the channel's handler and resolves
   * to its answer, or rejects with the TransportError code the caller must see.
   */
  serve(from: Address, channel: string, body: Uint8Array): Promise<Uint8Array> {
    const handler = this.requestHandlers.get(channel);
    if (handler === undefined) {
      return Promise.reject(new TransportError('remote', `${this.localAddress} has no handler for ${channel}`));
    }
    const controller = new AbortController();
    this.serving.add(controller);
    let answer: Promise<Uint8Array>;
    try {
      answer = handler(from, body, controller.signal);
    } catch (error) {
      answer = Promise.reject(error);
    }
    return answer.then(
      (response) => {
        this.serving.delete(controller);
        return response;
      },
      (error: unknown) => {
        this.serving.delete(controller);
        throw new TransportError('remote', `${this.localAddress} failed to answer on ${channel}`, { cause: error });
      },
    );
  }

  /** Called by the network when a native broadcast reaches this node. */
  deliverBroadcast(from: Address, topic: string, data: Uint8Array): void {
    if (this.lifecycle !== 'started') return;
    const handlers = this.subscriptions.get(topic);
    if (handlers === undefined) return;
    for (const handler of handlers) handler(from, data);
  }

  /** Whether a native broadcast on `topic` has a handler here. */
  subscribes(topic: string): boolean {
    return this.subscriptions.has(topic);
  }

  publish(topic: string, data: Uint8Array): void {
    if (this.lifecycle === 'started') this.wire.publish(this, topic, data.slice());
  }

  subscribe(topic: string, handler: BroadcastHandler): void {
    const handlers = this.subscriptions.get(topic);
    if (handlers === undefined) this.subscriptions.set(topic, [handler]);
    else handlers.push(handler);
  }

  /** Drops a settled request from the outstanding set; its promise continuations are now pending. */
  settled(request: OutgoingRequest): void {
    this.outgoing.delete(request);
    this.wire.noteAsyncWork();
  }

  private abortEverything(code: TransportErrorCode): void {
    const outstanding = [...this.outgoing];
    for (const request of outstanding) request.fail(code, `transport of ${this.localAddress} stopped`);
    for (const controller of this.serving) controller.abort();
    this.serving.clear();
  }
}
