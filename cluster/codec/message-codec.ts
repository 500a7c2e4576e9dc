// Encoding of single messages and of compound packets. A packet is
//   [WIRE_VERSION] ([kind u8][body length varint][body])*
// so a receiver can skip a kind it does not know, and a gossip message is encoded once when queued and
// then copied as-is into every packet that piggybacks it.
import { ByteReader, ByteWriter, varintBytes } from './bytes.js';
import { MalformedMessageError, UnsupportedWireVersionError } from './errors.js';
import type { AliveMessage, ClusterMessage, DeadMessage, Metadata, MemberState, SuspectMessage } from './messages.js';
import { WIRE_VERSION } from './messages.js';

const KIND_CODE = { ping: 1, ack: 2, nack: 3, 'ping-req': 4, suspect: 5, alive: 6, dead: 7, user: 8 } as const;
export const PUSH_PULL_KIND_CODE = 9;

const STATE_CODE: Record<MemberState, number> = { alive: 0, suspect: 1, dead: 2, left: 3 };
const STATE_BY_CODE: readonly MemberState[] = ['alive', 'suspect', 'dead', 'left'];

/** Most metadata entries a decoder accepts in one map. */
const MAX_METADATA_ENTRIES = 64;

/** Shared empty metadata, so members without metadata cost no allocation. */
export const EMPTY_METADATA: Metadata = Object.freeze({});

const body = new ByteWriter(512);

export function writeMetadata(writer: ByteWriter, metadata: Metadata): void {
  const keys = Object.keys(metadata);
  writer.varint(keys.length);
  for (const key of keys) {
    writer.string(key);
    writer.string(metadata[key] as string);
  }
}

export function readMetadata(reader: ByteReader): Metadata {
  const count = reader.varint();
  if (count === 0) return EMPTY_METADATA;
  if (count > MAX_METADATA_ENTRIES) throw new MalformedMessageError('too many metadata entries');
  const metadata: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const key = reader.string();
    // Assigning __proto__ on a plain object would change its prototype instead of adding a key.
    if (key === '__proto__') throw new MalformedMessageError('reserved metadata key');
    metadata[key] = reader.string();
  }
  return metadata;
}

export function writeState(writer: ByteWriter, state: MemberState): void {
  writer.u8(STATE_CODE[state]);
}

export function readState(reader: ByteReader): MemberState {
  const state = STATE_BY_CODE[reader.u8()];
  if (state === undefined) throw new MalformedMessageError('unknown member state');
  return state;
}

function writeBody(message: ClusterMessage): void {
  switch (message.kind) {
    case 'ping':
      body.varint(message.seq);
      body.string(message.target);
      return;
    case 'ack':
    case 'nack':
      body.varint(message.seq);
      return;
    case 'ping-req':
      body.varint(message.seq);
      body.string(message.target);
      body.string(message.targetAddress);
      body.u8(message.wantNack ? 1 : 0);
      return;
    case 'suspect':
    case 'dead':
      body.string(message.name);
      body.varint(message.incarnation);
      body.string(message.from);
      return;
    case 'alive':
      body.string(message.name);
      body.string(message.address);
      body.varint(message.incarnation);
      writeMetadata(body, message.metadata);
      return;
    case 'user':
      body.string(message.origin);
      body.varint(message.seq);
      body.bytes(message.payload);
      return;
  }
}

/**
 * Slots of the membership-encoding cache, a power of two. Every member that learns of an alive, suspect
 * or dead re-gossips the same message, so one process running many members (the simulator: 1,000 of
 * them, a million queued alive messages during a join storm) would otherwise hold one copy of the same
 * bytes per member.
 */
const ENCODING_CACHE_SLOTS = 4096;

type MembershipMessage = AliveMessage | SuspectMessage | DeadMessage;

class CachedEncoding {
  constructor(
    readonly message: MembershipMessage,
    readonly bytes: Uint8Array,
  ) {}
}

const encodingCache: (CachedEncoding | undefined)[] = new Array<CachedEncoding | undefined>(ENCODING_CACHE_SLOTS).fill(
  undefined,
);

/** The slot of a message: a hash of its member's name, shifted by kind so an alive and a suspect of one member coexist. */
function encodingSlot(message: MembershipMessage): number {
  const name = message.name;
  let hash = 0x811c9dc5 ^ KIND_CODE[message.kind];
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return (hash >>> 0) & (ENCODING_CACHE_SLOTS - 1);
}

/** Whether two membership messages encode to the same bytes (metadata compared by identity). */
function sameEncoding(a: MembershipMessage, b: MembershipMessage): boolean {
  if (a.kind !== b.kind || a.name !== b.name || a.incarnation !== b.incarnation) return false;
  if (a.kind === 'alive') {
    const alive = b as AliveMessage;
    return a.address === alive.address && a.metadata === alive.metadata;
  }
  return a.from === (b as SuspectMessage | DeadMessage).from;
}

/**
 * One message with its kind and length header, ready to be placed in a packet. The result is shared and
 * must not be modified: an alive, suspect or dead equal to the last one encoded for its member (alive
 * metadata compared by identity) returns the same bytes.
 */
export function encodeMessage(message: ClusterMessage): Uint8Array {
  if (message.kind !== 'alive' && message.kind !== 'suspect' && message.kind !== 'dead') return encodeFresh(message);
  const slot = encodingSlot(message);
  const cached = encodingCache[slot];
  if (cached !== undefined && sameEncoding(cached.message, message)) return cached.bytes;
  const bytes = encodeFresh(message);
  encodingCache[slot] = new CachedEncoding(message, bytes);
  return bytes;
}

function encodeFresh(message: ClusterMessage): Uint8Array {
  body.reset();
  writeBody(message);
  const bodyLength = body.position;
  const headerLength = 1 + varintBytes(bodyLength);
  const out = new Uint8Array(headerLength + bodyLength);
  out[0] = KIND_CODE[message.kind];
  let value = bodyLength;
  let at = 1;
  while (value >= 0x80) {
    out[at++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  out[at] = value;
  body.copyTo(out, headerLength);
  return out;
}

function readBody(kind: number, reader: ByteReader): ClusterMessage | undefined {
  switch (kind) {
    case KIND_CODE.ping:
      return { kind: 'ping', seq: reader.varint(), target: reader.string() };
    case KIND_CODE.ack:
      return { kind: 'ack', seq: reader.varint() };
    case KIND_CODE.nack:
      return { kind: 'nack', seq: reader.varint() };
    case KIND_CODE['ping-req']:
      return {
        kind: 'ping-req',
        seq: reader.varint(),
        target: reader.string(),
        targetAddress: reader.string(),
        wantNack: reader.u8() === 1,
      };
    case KIND_CODE.suspect:
      return { kind: 'suspect', name: reader.string(), incarnation: reader.varint(), from: reader.string() };
    case KIND_CODE.dead:
      return { kind: 'dead', name: reader.string(), incarnation: reader.varint(), from: reader.string() };
    case KIND_CODE.alive:
      return {
        kind: 'alive',
        name: reader.string(),
        address: reader.string(),
        incarnation: reader.varint(),
        metadata: readMetadata(reader),
      };
    case KIND_CODE.user:
      // The payload is copied: handlers may keep it after the packet buffer is reused.
      return { kind: 'user', origin: reader.string(), seq: reader.varint(), payload: reader.bytes().slice() };
    default:
      return undefined;
  }
}

const EMPTY_PACKET = new Uint8Array(0);
const packetBodyReader = new ByteReader(EMPTY_PACKET);

/**
 * Says whether an alive message about `name` at `incarnation` is old news to the receiver. Most alive
 * messages are (gossip repeats each one many times), so the decoder asks before decoding the address
 * and metadata, and drops the message when it is. `nameId` is the name's stringId (-1 when it has none).
 */
export type StaleAliveFilter = (name: string, nameId: number, incarnation: number) => boolean;

/**
 * Every message of a compound packet, in order. Throws UnsupportedWireVersionError or
 * MalformedMessageError; messages of unknown kinds are skipped, and so are alive messages
 * `isStaleAlive` calls old news.
 */
export function decodePacket(data: Uint8Array, isStaleAlive?: StaleAliveFilter): ClusterMessage[] {
  if (data.length === 0) throw new MalformedMessageError('empty packet');
  const version = data[0] as number;
  if (version !== WIRE_VERSION) throw new UnsupportedWireVersionError(version);
  const reader = new ByteReader(data, 1);
  // One reader for every message body of the packet, re-aimed at each: no allocation per message.
  const bodyReader = packetBodyReader;
  const messages: ClusterMessage[] = [];
  while (reader.remaining > 0) {
    const kind = reader.u8();
    const length = reader.varint();
    if (length > reader.remaining) throw new MalformedMessageError('message length past end of packet');
    const start = reader.position;
    const end = start + length;
    reader.skip(length);
    if (kind === KIND_CODE.alive && isStaleAlive !== undefined) {
      bodyReader.reset(data, start, end);
      const name = bodyReader.string();
      const nameId = bodyReader.lastStringId;
      bodyReader.skip(bodyReader.varint());
      if (isStaleAlive(name, nameId, bodyReader.varint())) continue;
    }
    bodyReader.reset(data, start, end);
    const message = readBody(kind, bodyReader);
    if (message !== undefined) messages.push(message);
  }
  bodyReader.reset(EMPTY_PACKET, 0, 0);
  return messages;
}

/** One message as `encodeMessage` wrote it (kind, length, body); undefined for a kind it does not know. */
export function decodeMessage(data: Uint8Array): ClusterMessage | undefined {
  const reader = new ByteReader(data);
  const kind = reader.u8();
  const length = reader.varint();
  if (length !== reader.remaining) throw new MalformedMessageError('message length does not match its bytes');
  return readBody(kind, reader);
}

/**
 * Finished packets are cut from shared slabs: a small view per packet instead of a backing store of its
 * own (a typed array above 64 bytes gets an off-heap store, which is several times dearer to allocate
 * and to collect; every probe and gossip round sends one). A slab lives while any packet cut from it
 * does, so 64 KiB bounds what one retained packet pins.
 */
const PACKET_SLAB_BYTES = 64 * 1024;
let packetSlab = new Uint8Array(PACKET_SLAB_BYTES);
let packetSlabOffset = 0;

/**
 * Assembles compound packets in one reusable buffer of the transport's packet size: a version byte,
 * then whole messages while they fit. `finish` copies the packet out, since transports may hold it.
 */
export class PacketBuilder {
  private readonly buffer: Uint8Array;
  private length = 0;

  constructor(readonly maxBytes: number) {
    if (maxBytes < 64) throw new RangeError(`packets must allow at least 64 bytes, got ${maxBytes}`);
    this.buffer = new Uint8Array(maxBytes);
  }

  begin(): void {
    this.buffer[0] = WIRE_VERSION;
    this.length = 1;
  }

  get remainingBytes(): number {
    return this.maxBytes - this.length;
  }

  /** Appends an encoded message; returns false (and appends nothing) when it does not fit. */
  add(message: Uint8Array): boolean {
    if (message.length > this.maxBytes - this.length) return false;
    this.buffer.set(message, this.length);
    this.length += message.length;
    return true;
  }

  finish(): Uint8Array {
    const length = this.length;
    if (packetSlabOffset + length > packetSlab.length) {
      packetSlab = new Uint8Array(Math.max(PACKET_SLAB_BYTES, length));
      packetSlabOffset = 0;
    }
    const packet = packetSlab.subarray(packetSlabOffset, packetSlabOffset + length);
    packet.set(this.buffer.subarray(0, length));
    packetSlabOffset += length;
    return packet;
  }
}
