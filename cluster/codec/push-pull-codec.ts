// Push-pull state on the reliable path: [WIRE_VERSION][kind][join u8][entry count] then per entry name,
// address, state, incarnation, metadata and the sender's remaining tombstone time; then the user
// broadcast digest (origin count, then per origin its name, seq count and seqs), the user broadcasts the
// receiver lacks (count, then each encoded message as a byte string) and the consumer delegate's state (a
// byte string). Not bounded by packet size, but by the member table and the bounded broadcast buffer.
import { ByteReader, ByteWriter } from './bytes.js';
import { MalformedMessageError, UnsupportedWireVersionError } from './errors.js';
import { PUSH_PULL_KIND_CODE, readMetadata, readState, writeMetadata, writeState } from './message-codec.js';
import type { BroadcastDigestEntry, PushPullState, StateEntry } from './messages.js';
import { WIRE_VERSION } from './messages.js';

/** Kind byte of push-pull's last leg, the broadcasts the answering side lacked. */
const BROADCAST_BATCH_KIND_CODE = 10;

/** Fewest bytes one entry can take; bounds the entry count a decoder believes. */
const MIN_ENTRY_BYTES = 5;

export function encodePushPull(state: PushPullState): Uint8Array {
  const writer = new ByteWriter(64 + state.entries.length * 48);
  writer.u8(WIRE_VERSION);
  writer.u8(PUSH_PULL_KIND_CODE);
  writer.u8(state.join ? 1 : 0);
  writer.varint(state.entries.length);
  for (const entry of state.entries) {
    writer.string(entry.name);
    writer.string(entry.address);
    writeState(writer, entry.state);
    writer.varint(entry.incarnation);
    writeMetadata(writer, entry.metadata);
    writer.varint(Math.max(0, Math.floor(entry.rememberMs)));
  }
  writeDigest(writer, state.broadcastDigest);
  writer.varint(state.broadcasts.length);
  for (const message of state.broadcasts) writer.bytes(message);
  writer.bytes(state.userState);
  return writer.finish();
}

/** The digest grouped by origin, so each origin's name is written once. */
function writeDigest(writer: ByteWriter, digest: readonly BroadcastDigestEntry[]): void {
  const byOrigin = new Map<string, number[]>();
  for (const id of digest) {
    const seqs = byOrigin.get(id.origin);
    if (seqs === undefined) byOrigin.set(id.origin, [id.seq]);
    else seqs.push(id.seq);
  }
  writer.varint(byOrigin.size);
  for (const [origin, seqs] of byOrigin) {
    writer.string(origin);
    writer.varint(seqs.length);
    for (const seq of seqs) writer.varint(seq);
  }
}

function readDigest(reader: ByteReader): BroadcastDigestEntry[] {
  const digest: BroadcastDigestEntry[] = [];
  const origins = reader.varint();
  if (origins * 2 > reader.remaining) throw new MalformedMessageError('digest origin count past end');
  for (let i = 0; i < origins; i++) {
    const origin = reader.string();
    const count = reader.varint();
    if (count > reader.remaining) throw new MalformedMessageError('digest count past end');
    for (let j = 0; j < count; j++) digest.push({ origin, seq: reader.varint() });
  }
  return digest;
}

export function decodePushPull(data: Uint8Array): PushPullState {
  if (data.length === 0) throw new MalformedMessageError('empty push-pull state');
  const version = data[0] as number;
  if (version !== WIRE_VERSION) throw new UnsupportedWireVersionError(version);
  const reader = new ByteReader(data, 1);
  if (reader.u8() !== PUSH_PULL_KIND_CODE) throw new MalformedMessageError('not a push-pull state');
  const join = reader.u8() === 1;
  const count = reader.varint();
  if (count * MIN_ENTRY_BYTES > reader.remaining) throw new MalformedMessageError('entry count past end');
  const entries: StateEntry[] = new Array<StateEntry>(count);
  for (let i = 0; i < count; i++) {
    entries[i] = {
      name: reader.string(),
      address: reader.string(),
      state: readState(reader),
      incarnation: reader.varint(),
      metadata: readMetadata(reader),
      rememberMs: reader.varint(),
    };
  }
  const broadcastDigest = readDigest(reader);
  const broadcastCount = reader.varint();
  if (broadcastCount > reader.remaining) throw new MalformedMessageError('broadcast count past end');
  const broadcasts: Uint8Array[] = [];
  for (let i = 0; i < broadcastCount; i++) broadcasts.push(reader.bytes().slice());
  const userState = reader.bytes().slice();
  if (reader.remaining !== 0) throw new MalformedMessageError('trailing bytes after push-pull state');
  return { join, entries, broadcastDigest, broadcasts, userState };
}

/** Push-pull's last leg: encoded user messages the answering side lacked, [WIRE_VERSION][kind][count][bytes]*. */
export function encodeBroadcastBatch(messages: readonly Uint8Array[]): Uint8Array {
  const writer = new ByteWriter(16 + messages.reduce((sum, message) => sum + message.length + 3, 0));
  writer.u8(WIRE_VERSION);
  writer.u8(BROADCAST_BATCH_KIND_CODE);
  writer.varint(messages.length);
  for (const message of messages) writer.bytes(message);
  return writer.finish();
}

export function decodeBroadcastBatch(data: Uint8Array): Uint8Array[] {
  if (data.length === 0) throw new MalformedMessageError('empty broadcast batch');
  const version = data[0] as number;
  if (version !== WIRE_VERSION) throw new UnsupportedWireVersionError(version);
  const reader = new ByteReader(data, 1);
  if (reader.u8() !== BROADCAST_BATCH_KIND_CODE) throw new MalformedMessageError('not a broadcast batch');
  const count = reader.varint();
  if (count > reader.remaining) throw new MalformedMessageError('broadcast count past end');
  const messages: Uint8Array[] = [];
  for (let i = 0; i < count; i++) messages.push(reader.bytes().slice());
  if (reader.remaining !== 0) throw new MalformedMessageError('trailing bytes after broadcast batch');
  return messages;
}
