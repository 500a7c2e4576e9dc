// Native broadcast over gossipsub topics. A message carries the publisher's transport address in front
// of the payload; gossipsub signs every message with the publisher's key (StrictSign), so the address
// is believed only when its /p2p/ peer id is the signer.
//
// Warm-up: gossipsub sends a message only to peers whose subscription it has heard and to which its
// own outbound stream is open; both are set up right after a connection, and a peer missing either is
// silently skipped (`sendRpc` finds no stream). `publish` therefore waits, at most warmUpMs, until
// every connected peer has announced the topic and has our stream; after that it publishes anyway (a
// broadcast to nobody is not an error: `allowPublishToZeroTopicPeers`), and gossip (IHAVE/IWANT over
// the message cache) reaches peers that subscribe within the next heartbeats.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { GossipSub, Message } from '@libp2p/gossipsub';
import type { Libp2p } from '@libp2p/interface';
import type { Address, BroadcastHandler, Broadcaster } from '../../cluster/transport.js';
import { TransportError } from '../../cluster/transport.js';
import { addressBelongsTo, MAX_ADDRESS_BYTES } from './wire.js';
import { concatBytes, encodeString, splitString } from './stream-io.js';

/** How often the warm-up looks at the topic's subscribers again. */
const WARM_UP_POLL_MS = 20;

/**
 * The peers gossipsub has an outbound stream to. `streamsOutbound` is public on the GossipSub class
 * but missing from the interface the package exports; should a later version drop it, the warm-up
 * falls back to waiting for subscriptions alone.
 */
function outboundStreams(pubsub: GossipSub): ReadonlyMap<string, unknown> | undefined {
  const streams = (pubsub as { streamsOutbound?: unknown }).streamsOutbound;
  return streams instanceof Map ? streams : undefined;
}

export interface GossipsubNode {
  readonly libp2p: Libp2p<{ pubsub: GossipSub }>;
  readonly localAddress: Address;
  readonly stopSignal: AbortSignal;
}

export class GossipsubBroadcaster implements Broadcaster {
  private readonly handlers = new Map<string, BroadcastHandler[]>();
  private node: GossipsubNode | undefined;

  constructor(
    private readonly warmUpMs: number,
    private readonly onHandlerError: (error: unknown) => void,
  ) {}

  /** Subscribes the started node to every topic asked for so far and starts delivering its messages. */
  attach(node: GossipsubNode): void {
    this.node = node;
    const pubsub = node.libp2p.services.pubsub;
    pubsub.addEventListener('message', (event) => this.deliver(event.detail));
    for (const topic of this.handlers.keys()) pubsub.subscribe(topic);
  }

  detach(): void {
    this.node = undefined;
  }

  subscribe(topic: string, handler: BroadcastHandler): void {
    const handlers = this.handlers.get(topic);
    if (handlers !== undefined) {
      handlers.push(handler);
      return;
    }
    this.handlers.set(topic, [handler]);
    this.node?.libp2p.services.pubsub.subscribe(topic);
  }

  async publish(topic: string, data: Uint8Array): Promise<void> {
    const node = this.running('publish');
    await this.warmUp(node, topic);
    await this.running('publish').libp2p.services.pubsub.publish(topic, concatBytes([...encodeString(node.localAddress), data]));
  }

  private running(operation: string): GossipsubNode {
    if (this.node === undefined) throw new TransportError('closed', `${operation}: the transport is not running`);
    return this.node;
  }

  private async warmUp(node: GossipsubNode, topic: string): Promise<void> {
    const pubsub = node.libp2p.services.pubsub;
    const deadline = performance.now() + this.warmUpMs;
    while (performance.now() < deadline) {
      const subscribers = new Set(pubsub.getSubscribers(topic).map(String));
      const outbound = outboundStreams(pubsub);
      const reachable = (peer: string): boolean => subscribers.has(peer) && (outbound?.has(peer) ?? true);
      if (node.libp2p.getPeers().every((peer) => reachable(peer.toString()))) return;
      try {
        await sleep(WARM_UP_POLL_MS, undefined, { signal: node.stopSignal });
      } catch {
        throw new TransportError('closed', 'publish: the transport stopped');
      }
    }
  }

  private deliver(message: Message): void {
    if (message.type !== 'signed') return;
    const handlers = this.handlers.get(message.topic);
    if (handlers === undefined) return;
    const envelope = splitString(message.data, MAX_ADDRESS_BYTES);
    if (envelope === undefined || !addressBelongsTo(envelope.value, message.from.toString())) return;
    for (const handler of handlers) {
      try {
        handler(envelope.value, envelope.rest);
      } catch (error) {
        this.onHandlerError(error);
      }
    }
  }
}
