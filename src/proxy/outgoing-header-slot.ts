// Node's own slot for a response's header fields, found once and proved by writing a response with it.
//
// Why: `writeHead(status, fields)` validates every field name and value, through two wrapped calls
// and two regular expressions per field, on every response. For a stored response that is the same
// work on the same fields on every hit: on Node 20 it measured about 850 instructions per field, a
// third of what a 1 KiB hit costs svc beyond a bare `http` server. Fields that `setHeader` put in
// the response's slot are not validated again when the head is written (they were validated on the
// way in); svc validates a stored field list once (see stored-head.ts) and hands it over through
// the same slot.
//
// Node writes a value handed over this way as it is, so one entry may carry several field lines
// already joined (`a\r\nName: b`): stored-head.ts hands a stored list over in a few such entries,
// and Node joins and inspects those instead of every field. The probe proves both.
//
// The slot is Node's internal `kOutHeaders` symbol, an own property of every OutgoingMessage on Node
// 20, 22 and 24, holding `{ lower-case name: [name, value] }`. Nothing public names it, so it is used
// only after a probe response written through it has put the expected bytes on a stream; on a Node
// that does anything else the slot is undefined and callers keep to `writeHead(status, fields)`.
import { IncomingMessage, OutgoingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { nodeInternalsAllowed } from '../runtime/node-internals.js';
import type { OutgoingResponse } from '../http/server-messages.js';

/** What the slot holds: each field under its lower-case name, as `[name as sent, value]`. */
export type OutgoingFields = Readonly<Record<string, readonly [string, string]>>;

/** A response whose header fields are given through the slot. */
type SlottedResponse = ServerResponse & Record<symbol, OutgoingFields | null>;

/** Writes one response through `slot` to an in-memory stream and reads back its head. */
function probeHead(slot: symbol): string {
  const request = new IncomingMessage(new Socket());
  request.method = 'GET';
  request.httpVersionMajor = 1;
  request.httpVersionMinor = 1;
  const response = new ServerResponse(request) as SlottedResponse;
  response.sendDate = false;
  response.shouldKeepAlive = false;
  const wire = new PassThrough();
  response.assignSocket(wire as unknown as Socket);
  // Frozen, as the fields svc hands over are (they are shared by responses): a Node that wrote into
  // the slot while sending a head would throw here and fail the probe.
  response[slot] = Object.freeze({ 'x-probe': ['X-Probe', 'a b\r\nX-Joined: c'], 'content-length': ['Content-Length', '2'] } as const);
  response.writeHead(200);
  response.end('ok');
  const written = wire.read() as Buffer | null;
  response.detachSocket(wire as unknown as Socket);
  return written?.toString('latin1') ?? '';
}

const PROBE_EXPECTED = 'HTTP/1.1 200 OK\r\nX-Probe: a b\r\nX-Joined: c\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok';

function findSlot(): symbol | undefined {
  if (!nodeInternalsAllowed()) return undefined;
  const slot = Object.getOwnPropertySymbols(new OutgoingMessage()).find((symbol) => symbol.description === 'kOutHeaders');
  if (slot === undefined) return undefined;
  try {
    return probeHead(slot) === PROBE_EXPECTED ? slot : undefined;
  } catch {
    return undefined;
  }
}

/** The slot, or undefined when this Node does not behave as the probe expects or SVC_NODE_INTERNALS is off. */
export const outgoingHeaderSlot: symbol | undefined = findSlot();

/**
 * Gives `fields` to `response` as its header fields, to be written by the next `writeHead(status)`
 * without validation: the caller has validated every field line in them. False (and nothing done)
 * when the slot is unavailable or already in use.
 * Several responses may be given one frozen `fields`: Node only reads the slot when it writes the
 * head, and refuses setHeader and removeHeader once the head is sent.
 */
export function handOverFields(response: OutgoingResponse, fields: OutgoingFields): boolean {
  if (outgoingHeaderSlot === undefined) return false;
  const slotted = response as SlottedResponse;
  // An HTTP/2 response has no such slot (undefined, not null): it takes writeHead(status, fields),
  // whose fields Node's http2 layer checks as it encodes them.
  if (slotted[outgoingHeaderSlot] !== null) return false;
  slotted[outgoingHeaderSlot] = fields;
  return true;
}
