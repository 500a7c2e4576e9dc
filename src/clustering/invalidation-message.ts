// The invalidation messages nodes send each other (spec §6.1), as JSON behind a version byte. They go
// both by HTTP fan-out and by gossip, so each carries an id by which a node applies it once.

export const INVALIDATION_WIRE_VERSION = 1;

export type InvalidationMessage =
  | { id: string; type: 'purge'; url: string }
  | { id: string; type: 'purge_batch'; urls: string[] }
  | { id: string; type: 'ban'; host_regex?: string; path_regex?: string; surrogate_key?: string }
  | { id: string; type: 'refresh'; url: string };

export type InvalidationKind = InvalidationMessage['type'];

export class MalformedInvalidationError extends Error {
  override readonly name = 'MalformedInvalidationError';
  readonly code = 'malformed_invalidation';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeInvalidation(message: InvalidationMessage): Uint8Array {
  const json = encoder.encode(JSON.stringify(message));
  const bytes = new Uint8Array(json.length + 1);
  bytes[0] = INVALIDATION_WIRE_VERSION;
  bytes.set(json, 1);
  return bytes;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isOptionalString = (value: unknown): boolean => value === undefined || isString(value);

export function decodeInvalidation(bytes: Uint8Array): InvalidationMessage {
  if (bytes[0] !== INVALIDATION_WIRE_VERSION) throw new MalformedInvalidationError(`unknown invalidation wire version ${bytes[0]}`);
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes.subarray(1)));
  } catch {
    throw new MalformedInvalidationError('invalidation message is not JSON');
  }
  const message = value as Record<string, unknown> | null;
  if (!message || !isString(message.id)) throw new MalformedInvalidationError('invalidation message without id');
  switch (message.type) {
    case 'purge':
    case 'refresh':
      if (isString(message.url)) return message as InvalidationMessage;
      break;
    case 'purge_batch':
      if (Array.isArray(message.urls) && message.urls.every(isString)) return message as InvalidationMessage;
      break;
    case 'ban':
      if (isOptionalString(message.host_regex) && isOptionalString(message.path_regex) && isOptionalString(message.surrogate_key)) {
        return message as InvalidationMessage;
      }
      break;
  }
  throw new MalformedInvalidationError(`invalidation message of type ${String(message.type)} is malformed`);
}
