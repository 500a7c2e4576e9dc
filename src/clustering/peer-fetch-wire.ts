// The peer-fetch RPC's payloads (POST /v1/peer/fetch): the client request a node forwards to a key's
// owner, and the owner's answer. Requests are small JSON; an answer is a JSON head then the raw body,
// so a large object crosses the wire once, unencoded.

export const PEER_FETCH_WIRE_VERSION = 1;

export interface PeerFetchRequest {
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  /** The client's header fields (hop-by-hop ones removed), flat `[name, value, …]`, Host included. */
  headers: string[];
  /** How many nodes this request has visited, the asking node included. */
  hops: number;
}

export interface PeerFetchAnswer {
  status: number;
  /** Response fields as the owner would send them to a client, X-Cache and Age included. */
  fields: string[];
  body: Uint8Array;
}

export class MalformedPeerFetchError extends Error {
  override readonly name = 'MalformedPeerFetchError';
  readonly code = 'malformed_peer_fetch';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodePeerFetchRequest(request: PeerFetchRequest): Uint8Array {
  return encoder.encode(JSON.stringify({ v: PEER_FETCH_WIRE_VERSION, ...request }));
}

export function decodePeerFetchRequest(bytes: Uint8Array): PeerFetchRequest {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>;
  } catch {
    throw new MalformedPeerFetchError('peer fetch request is not JSON');
  }
  const { v, method, path, headers, hops } = value;
  if (
    v !== PEER_FETCH_WIRE_VERSION ||
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
  return { method, path, headers: headers as string[], hops };
}

export function encodePeerFetchAnswer(answer: PeerFetchAnswer): Uint8Array {
  const head = encoder.encode(JSON.stringify({ v: PEER_FETCH_WIRE_VERSION, status: answer.status, fields: answer.fields }));
  const bytes = new Uint8Array(4 + head.length + answer.body.length);
  new DataView(bytes.buffer).setUint32(0, head.length);
  bytes.set(head, 4);
  bytes.set(answer.body, 4 + head.length);
  return bytes;
}

export function decodePeerFetchAnswer(bytes: Uint8Array): PeerFetchAnswer {
  if (bytes.length < 4) throw new MalformedPeerFetchError('peer fetch answer is truncated');
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + headLength > bytes.length) throw new MalformedPeerFetchError('peer fetch answer head is truncated');
  let head: Record<string, unknown>;
  try {
    head = JSON.parse(decoder.decode(bytes.subarray(4, 4 + headLength))) as Record<string, unknown>;
  } catch {
    throw new MalformedPeerFetchError('peer fetch answer head is not JSON');
  }
  const { v, status, fields } = head;
  if (v !== PEER_FETCH_WIRE_VERSION || typeof status !== 'number' || !Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) {
    throw new MalformedPeerFetchError('peer fetch answer head is malformed');
  }
  return { status, fields: fields as string[], body: bytes.subarray(4 + headLength) };
}
