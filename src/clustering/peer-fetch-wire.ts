// The peer-fetch RPC's payloads (POST /v1/peer/fetch). A body crosses from the owner to the asking node
// in parts, each one request and answer on the cluster's reliable path, so neither node ever holds a
// whole large object for a peer and every part is bounded by the peer-fetch timeout:
//   - the asker opens with the client request it forwards; the owner answers the head and the first
//     part, and, when more follows, a stream id and the member that holds the stream;
//   - the asker then asks that member for the part at each offset until an answer carries no stream id;
//   - an owner may refuse an object larger than its max_object_bytes; the asker then goes to the origin.
// Requests are small JSON; an answer is a JSON head then raw bytes, so parts cross the wire unencoded.
import { MalformedRequestError } from '../../cluster/index.js';

/** 2: bodies in parts (1 carried the whole body in one answer). Nodes of both versions do not interwork. */
export const PEER_FETCH_WIRE_VERSION = 2;

/** 1 MiB per part: 16 of undici's chunks, a few ms on a LAN, and one part in flight per stream. */
export const PEER_FETCH_PART_BYTES = 1024 * 1024;

export interface PeerFetchRequest {
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  /** The client's header fields (hop-by-hop ones removed), flat `[name, value, …]`, Host included. */
  headers: string[];
  /** How many nodes this request has visited, the asking node included. */
  hops: number;
}

/** A request for the part of a stream that starts at `offset`. */
export interface PeerFetchPartRequest {
  stream: string;
  offset: number;
}

export type PeerFetchMessage = ({ kind: 'open' } & PeerFetchRequest) | ({ kind: 'part' } & PeerFetchPartRequest);

/** Where the rest of a body is: ask `node` for `stream` from the next offset. */
export interface PeerFetchContinuation {
  stream: string;
  node: string;
}

export type PeerFetchAnswer =
  | {
      kind: 'answer';
      status: number;
      /** Response fields as the owner would send them to a client, X-Cache and Age included. */
      fields: string[];
      /** The first part of the body. */
      body: Uint8Array;
      /** Absent when `body` is the whole body. */
      more: PeerFetchContinuation | undefined;
    }
  /** The owner does not send objects larger than its max_object_bytes to peers. */
  | { kind: 'refused'; reason: 'too_large' };

export interface PeerFetchPart {
  body: Uint8Array;
  /** Whether more parts follow. */
  more: boolean;
}

/** A peer-fetch payload this node cannot read: on `/v1/peer/fetch`, a 400. */
export class MalformedPeerFetchError extends MalformedRequestError {
  override readonly name = 'MalformedPeerFetchError';
  override readonly code = 'malformed_peer_fetch';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isStreamId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 64;
}

export function encodePeerFetchRequest(request: PeerFetchRequest): Uint8Array {
  return encoder.encode(JSON.stringify({ v: PEER_FETCH_WIRE_VERSION, ...request }));
}

export function encodePeerFetchPartRequest(request: PeerFetchPartRequest): Uint8Array {
  return encoder.encode(JSON.stringify({ v: PEER_FETCH_WIRE_VERSION, ...request }));
}

function parseJson(bytes: Uint8Array, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new MalformedPeerFetchError(`${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MalformedPeerFetchError(`${what} is not an object`);
  return value as Record<string, unknown>;
}

export function decodePeerFetchMessage(bytes: Uint8Array): PeerFetchMessage {
  const value = parseJson(bytes, 'peer fetch request');
  if (value.v !== PEER_FETCH_WIRE_VERSION) throw new MalformedPeerFetchError('peer fetch request has another wire version');
  if (value.stream !== undefined) {
    if (!isStreamId(value.stream) || !isOffset(value.offset)) throw new MalformedPeerFetchError('peer fetch part request is malformed');
    return { kind: 'part', stream: value.stream, offset: value.offset };
  }
  const { method, path, headers, hops } = value;
  if (
    (method !== 'GET' && method !== 'HEAD') ||
    typeof path !== 'string' ||
    !path.startsWith('/') ||
    !Array.isArray(headers) ||
    headers.length % 2 !== 0 ||
    !headers.every((field) => typeof field === 'string') ||
    typeof hops !== 'number' ||
    !Number.isInteger(hops) ||
    hops < 1
  ) {
    throw new MalformedPeerFetchError('peer fetch request is malformed');
  }
  return { kind: 'open', method, path, headers: headers as string[], hops };
}

function frame(head: Record<string, unknown>, body: Uint8Array): Uint8Array {
  const headBytes = encoder.encode(JSON.stringify({ v: PEER_FETCH_WIRE_VERSION, ...head }));
  const bytes = new Uint8Array(4 + headBytes.length + body.length);
  new DataView(bytes.buffer).setUint32(0, headBytes.length);
  bytes.set(headBytes, 4);
  bytes.set(body, 4 + headBytes.length);
  return bytes;
}

function unframe(bytes: Uint8Array, what: string): { head: Record<string, unknown>; body: Uint8Array } {
  if (bytes.length < 4) throw new MalformedPeerFetchError(`${what} is truncated`);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + headLength > bytes.length) throw new MalformedPeerFetchError(`${what} head is truncated`);
  const head = parseJson(bytes.subarray(4, 4 + headLength), `${what} head`);
  if (head.v !== PEER_FETCH_WIRE_VERSION) throw new MalformedPeerFetchError(`${what} has another wire version`);
  return { head, body: bytes.subarray(4 + headLength) };
}

export function encodePeerFetchAnswer(answer: PeerFetchAnswer): Uint8Array {
  if (answer.kind === 'refused') return frame({ refused: answer.reason }, new Uint8Array(0));
  return frame({ status: answer.status, fields: answer.fields, ...(answer.more ? answer.more : {}) }, answer.body);
}

export function decodePeerFetchAnswer(bytes: Uint8Array): PeerFetchAnswer {
  const { head, body } = unframe(bytes, 'peer fetch answer');
  if (head.refused === 'too_large') return { kind: 'refused', reason: 'too_large' };
  const { status, fields, stream, node } = head;
  if (
    typeof status !== 'number' ||
    !Number.isInteger(status) ||
    status < 100 ||
    status > 999 ||
    !Array.isArray(fields) ||
    fields.length % 2 !== 0 ||
    !fields.every((f) => typeof f === 'string') ||
    (stream !== undefined && (!isStreamId(stream) || typeof node !== 'string' || node.length === 0))
  ) {
    throw new MalformedPeerFetchError('peer fetch answer head is malformed');
  }
  const more = stream === undefined ? undefined : { stream: stream as string, node: node as string };
  return { kind: 'answer', status, fields: fields as string[], body, more };
}

export function encodePeerFetchPart(part: PeerFetchPart): Uint8Array {
  return frame({ more: part.more }, part.body);
}

export function decodePeerFetchPart(bytes: Uint8Array): PeerFetchPart {
  const { head, body } = unframe(bytes, 'peer fetch part');
  if (typeof head.more !== 'boolean') throw new MalformedPeerFetchError('peer fetch part head is malformed');
  return { body, more: head.more };
}
