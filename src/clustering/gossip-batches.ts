// How invalidations ride on gossip. A packet is about 1.3 KB and each gossip message is sent a dozen
// times, so gossip carries few bytes per second: invalidations made close together go as one message
// (a batch), and a batch too large for its share of a packet goes as an announcement of a few bytes
// (`pull`: this node's outbox holds batch N of session S) that each node answers by fetching the batch
// over the reliable path. Whatever its size, an invalidation then reaches every node in gossip's time
// plus one request (eventual mode: spec §1.4 asks 1–5 s), and gossip never drowns in bytes.
import { INVALIDATION_WIRE_VERSION, invalidationFrom, invalidationWeight, type InvalidationMessage } from './invalidation-message.js';

export type GossipPayload = { kind: 'batch'; messages: InvalidationMessage[] } | { kind: 'pull'; session: string; seqs: number[] };

/** Most batch numbers one announcement or one pull request names. */
export const MAX_PULL_SEQS = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function encode(document: unknown): Uint8Array {
  const json = encoder.encode(JSON.stringify(document));
  const bytes = new Uint8Array(json.length + 1);
  bytes[0] = INVALIDATION_WIRE_VERSION;
  bytes.set(json, 1);
  return bytes;
}

function decode(bytes: Uint8Array): Record<string, unknown> | undefined {
  if (bytes[0] !== INVALIDATION_WIRE_VERSION) return undefined;
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes.subarray(1)));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function encodeBatch(messages: readonly InvalidationMessage[]): Uint8Array {
  return encode({ m: messages });
}

export function encodePull(session: string, seqs: readonly number[]): Uint8Array {
  return encode({ pull: seqs, s: session });
}

function isSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The messages of a batch document; malformed ones are left out (each was validated where it was made). */
export function messagesOf(document: Record<string, unknown> | undefined): InvalidationMessage[] | undefined {
  if (document === undefined || !Array.isArray(document.m)) return undefined;
  const messages: InvalidationMessage[] = [];
  for (const item of document.m) {
    const message = invalidationFrom(item);
    if (message !== undefined) messages.push(message);
  }
  return messages;
}

/** A gossip payload of ours, or undefined for anything else (another consumer's broadcast, garbage). */
export function decodeGossip(bytes: Uint8Array): GossipPayload | undefined {
  const document = decode(bytes);
  const messages = messagesOf(document);
  if (messages !== undefined) return { kind: 'batch', messages };
  if (document === undefined || typeof document.s !== 'string' || !Array.isArray(document.pull)) return undefined;
  const seqs = document.pull.filter(isSeq).slice(0, MAX_PULL_SEQS);
  return { kind: 'pull', session: document.s, seqs };
}

/** A pull request (`invalidations` channel): the session and batch numbers wanted. */
export function decodePullRequest(bytes: Uint8Array): { session: string; seqs: number[] } | undefined {
  const payload = decodeGossip(bytes);
  return payload?.kind === 'pull' ? payload : undefined;
}

export function decodeBatch(bytes: Uint8Array): InvalidationMessage[] | undefined {
  return messagesOf(decode(bytes));
}

/**
 * Batches this node announced, kept for the nodes that pull them: five minutes (gossip's anti-entropy
 * brings a missed announcement within one push-pull period) and 50,000 URLs at most.
 */
export class Outbox {
  private readonly batches = new Map<number, { messages: InvalidationMessage[]; atMs: number; weight: number }>();
  private nextSeq = 0;
  private weight = 0;

  constructor(
    readonly session: string,
    private readonly retentionMs = 5 * 60 * 1000,
    private readonly maxWeight = 50_000,
  ) {}

  /** Keeps `messages` as the next batch; returns its number. */
  add(messages: InvalidationMessage[], nowMs: number): number {
    const seq = this.nextSeq++;
    const weight = messages.reduce((sum, message) => sum + invalidationWeight(message), 0);
    this.batches.set(seq, { messages, atMs: nowMs, weight });
    this.weight += weight;
    this.expire(nowMs);
    return seq;
  }

  /** The messages of the batches named (those still kept), for a pull from `session`. */
  take(session: string, seqs: readonly number[], nowMs: number): InvalidationMessage[] {
    this.expire(nowMs);
    if (session !== this.session) return [];
    return seqs.flatMap((seq) => this.batches.get(seq)?.messages ?? []);
  }

  private expire(nowMs: number): void {
    for (const [seq, batch] of this.batches) {
      if (batch.atMs + this.retentionMs > nowMs && this.weight <= this.maxWeight) break;
      this.batches.delete(seq);
      this.weight -= batch.weight;
    }
  }
}
