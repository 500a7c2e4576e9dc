// Writing the head of a whole stored response: the stored fields as they are, then `Age` and
// `X-Cache`. A stored field list is validated once, the first time it is served, and from then on
// handed to Node through its own header slot (src/proxy/outgoing-header-slot.ts), which Node writes
// without validating each field again on every hit.
//
// The list goes over packed: Node frames a response by a handful of fields (Content-Length, Date…)
// and only needs to see those; every run of other fields is handed over as one slot entry whose
// value holds its lines already joined. Node then joins and inspects a few entries per hit instead
// of every stored field plus Age and X-Cache, which measured about 400 ns per hit on Node 20.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { isHttp1, type OutgoingResponse } from '../http/server-messages.js';
import type { CacheResult } from '../observe/metrics.js';
import { handOverFields, outgoingHeaderSlot, type OutgoingFields } from './outgoing-header-slot.js';

/**
 * The fields Node's head writer reads to frame a response (`matchHeader` in Node's
 * _http_outgoing.js, on Node 20, 22 and 24): each goes over as a slot entry of its own, so that
 * Node sees it. The hop-by-hop ones are never stored; they are listed so that a list holding one
 * anyway is still framed the way Node would frame it.
 */
const FRAMING_FIELDS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'date',
  'expect',
  'keep-alive',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The last run of stored fields, which each hit extends with its own Age and X-Cache lines. */
interface Tail {
  readonly key: string;
  readonly name: string;
  /** The run's value: its first field's value, then `\r\nname: value` for each further field. */
  readonly value: string;
}

/**
 * A stored field list in slot form, and the last copy of it a hit was given: hits in the same second
 * send the same Age and X-Cache, so they share one frozen copy rather than each making its own.
 */
interface SlotHead {
  /** Every entry before the tail, in the stored order. */
  readonly leading: OutgoingFields;
  /** Undefined when the list ends with a framing field: Age then starts an entry of its own. */
  readonly tail: Tail | undefined;
  lastAge: string;
  lastResult: CacheResult | undefined;
  lastFields: OutgoingFields | undefined;
}

/**
 * The slot form of each stored field list served so far, or null for a list served the plain way.
 * Keyed by the list itself: stored lists are never changed in place, a revalidated entry gets a new one.
 */
const heads = new WeakMap<readonly string[], SlotHead | null>();

/**
 * The stored fields in slot form: each framing field an entry, each run of other fields one entry
 * keyed by its first field's lower-case name. Null when two entries would share a key (a repeated
 * framing field, or two runs starting with one name), when a key is one an object cannot hold, or
 * when an entry would take the key `age`, kept for the entry Age starts after a framing field (a
 * stored list has no Age; svc computes it): the plain path then writes the list. Throws as
 * `writeHead` would for an invalid field, before any of it is joined: only the joins put line
 * breaks into a value.
 */
function slotHeadOf(stored: readonly string[]): SlotHead | null {
  const leading: Record<string, readonly [string, string]> = {};
  let run: Tail | undefined;
  const isFree = (key: string): boolean => key !== '__proto__' && key !== 'age' && !Object.hasOwn(leading, key);
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i]!;
    const value = stored[i + 1]!;
    validateHeaderName(name);
    validateHeaderValue(name, value);
    const key = name.toLowerCase();
    if (!FRAMING_FIELDS.has(key)) {
      if (run !== undefined) run = { ...run, value: `${run.value}\r\n${name}: ${value}` };
      else if (isFree(key)) run = { key, name, value };
      else return null;
      continue;
    }
    if (run !== undefined) {
      leading[run.key] = [run.name, run.value];
      run = undefined;
    }
    if (!isFree(key)) return null;
    leading[key] = [name, value];
  }
  return { leading, tail: run, lastAge: '', lastResult: undefined, lastFields: undefined };
}

/** The fields of a whole stored response as svc sends it: the stored ones plus Age and X-Cache. */
export function fieldsWithAge(stored: readonly string[], age: string, cacheResult: CacheResult): string[] {
  return [...stored, 'age', age, 'x-cache', cacheResult];
}

/** The slot fields of one hit: the stored ones with this Age and X-Cache, shared with the hits before it. */
function fieldsFor(head: SlotHead, age: string, cacheResult: CacheResult): OutgoingFields {
  if (head.lastFields !== undefined && head.lastAge === age && head.lastResult === cacheResult) return head.lastFields;
  const fields: Record<string, readonly [string, string]> = { ...head.leading };
  const { tail } = head;
  if (tail === undefined) fields.age = ['age', `${age}\r\nx-cache: ${cacheResult}`];
  else fields[tail.key] = [tail.name, `${tail.value}\r\nage: ${age}\r\nx-cache: ${cacheResult}`];
  head.lastAge = age;
  head.lastResult = cacheResult;
  head.lastFields = Object.freeze(fields);
  return head.lastFields;
}

/**
 * The slot fields a hit with this Age and X-Cache hands to Node, or null when the stored list is
 * written the plain way (no slot on this Node, or a list the slot cannot hold).
 */
export function storedSlotFields(stored: readonly string[], age: string, cacheResult: CacheResult): OutgoingFields | null {
  // On a Node without the slot every hit takes the plain path: no slot form is built or copied.
  let head = outgoingHeaderSlot === undefined ? null : heads.get(stored);
  if (head === undefined) {
    head = slotHeadOf(stored);
    heads.set(stored, head);
  }
  return head === null ? null : fieldsFor(head, age, cacheResult);
}

/** Writes the head of a whole stored response with status `status`. */
export function writeStoredHead(response: OutgoingResponse, status: number, stored: readonly string[], age: string, cacheResult: CacheResult): void {
  const fields = storedSlotFields(stored, age, cacheResult);
  if (fields !== null && handOverFields(response, fields)) {
    response.writeHead(status);
    return;
  }
  try {
    response.writeHead(status, fieldsWithAge(stored, age, cacheResult));
  } catch (error) {
    // Node sets the reason phrase before it checks the fields: cleared, the 500 written next says
    // "Internal Server Error", not this status's "OK". (HTTP/2 has no reason phrase.)
    if (isHttp1(response)) response.statusMessage = '';
    throw error;
  }
}
