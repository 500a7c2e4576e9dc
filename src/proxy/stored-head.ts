// Writing the head of a whole stored response: the stored fields as they are, then `Age` and
// `X-Cache`. A stored field list is validated once, the first time it is served, and from then on
// handed to Node through its own header slot (src/node/outgoing-header-slot.ts), which Node writes
// without validating each field again on every hit.
import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type { CacheResult } from '../observe/metrics.js';
import { handOverFields, outgoingHeaderSlot, type OutgoingFields } from '../node/outgoing-header-slot.js';

/** Placeholder for the two per-hit fields, so that every hit's copy of a template has its shape. */
const PER_HIT = ['', ''] as const;

/**
 * A stored field list in slot form, and the last copy of it a hit was given: hits in the same second
 * send the same Age and X-Cache, so they share one frozen copy rather than each making its own.
 */
interface SlotHead {
  readonly template: OutgoingFields;
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
 * The stored fields in slot form, with `age` and `x-cache` last; null when the list repeats a field
 * name (the slot holds one name once, and repeated fields must keep their order byte for byte), or
 * carries a name an object key cannot hold. Throws as `writeHead` would for an invalid field.
 */
function templateOf(stored: readonly string[]): OutgoingFields | null {
  const template: Record<string, readonly [string, string]> = {};
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i]!;
    const value = stored[i + 1]!;
    validateHeaderName(name);
    validateHeaderValue(name, value);
    const key = name.toLowerCase();
    if (key === '__proto__' || key === 'age' || key === 'x-cache' || Object.hasOwn(template, key)) return null;
    template[key] = [name, value];
  }
  template.age = PER_HIT;
  template['x-cache'] = PER_HIT;
  return template;
}

/** `[name, value]` pairs for X-Cache, one per result, shared by every hit. */
const X_CACHE_FIELDS: Record<CacheResult, readonly [string, string]> = {
  HIT: ['x-cache', 'HIT'],
  MISS: ['x-cache', 'MISS'],
  BYPASS: ['x-cache', 'BYPASS'],
  STALE: ['x-cache', 'STALE'],
  REVALIDATED: ['x-cache', 'REVALIDATED'],
};

/** The fields of a whole stored response as svc sends it: the stored ones plus Age and X-Cache. */
export function fieldsWithAge(stored: readonly string[], age: string, cacheResult: CacheResult): string[] {
  return [...stored, 'age', age, 'x-cache', cacheResult];
}

/** The slot fields of one hit: the template with this Age and X-Cache, shared with the hits before it. */
function fieldsFor(head: SlotHead, age: string, cacheResult: CacheResult): OutgoingFields {
  if (head.lastFields !== undefined && head.lastAge === age && head.lastResult === cacheResult) return head.lastFields;
  const fields: Record<string, readonly [string, string]> = { ...head.template };
  fields.age = ['age', age];
  fields['x-cache'] = X_CACHE_FIELDS[cacheResult];
  head.lastAge = age;
  head.lastResult = cacheResult;
  head.lastFields = Object.freeze(fields);
  return head.lastFields;
}

/** Writes the head of a whole stored response with status `status`. */
export function writeStoredHead(response: ServerResponse, status: number, stored: readonly string[], age: string, cacheResult: CacheResult): void {
  // On a Node without the slot every hit takes the plain path: no template is built or copied.
  let head = outgoingHeaderSlot === undefined ? null : heads.get(stored);
  if (head === undefined) {
    const template = templateOf(stored);
    head = template === null ? null : { template, lastAge: '', lastResult: undefined, lastFields: undefined };
    heads.set(stored, head);
  }
  if (head !== null && handOverFields(response, fieldsFor(head, age, cacheResult))) {
    response.writeHead(status);
    return;
  }
  response.writeHead(status, fieldsWithAge(stored, age, cacheResult));
}
