// The invalidation messages nodes send each other (spec §6.1), as JSON behind a version byte. They go
// by HTTP fan-out, by gossip and by catch-up, so each carries the id by which a node applies it once,
// and the time it was made (`at`, ms since the epoch, on the clock of the node where it was made), so
// a node that receives it late applies it as of then, never as new.
import { MalformedRequestError } from '../../cluster/index.js';

/** Version 2 added `at`; version 1 was never released, so it is not read. */
export const INVALIDATION_WIRE_VERSION = 2;

/** Longest id accepted from the network: ours are 16 characters; room for other producers. */
export const MAX_INVALIDATION_ID_LENGTH = 64;

interface Made {
  id: string;
  /** When it was made, ms since the epoch. */
  at: number;
}

export type InvalidationMessage =
  | (Made & { type: 'purge'; url: string })
  | (Made & { type: 'purge_batch'; urls: string[] })
  | (Made & { type: 'ban'; host_regex?: string; path_regex?: string; surrogate_key?: string })
  | (Made & { type: 'refresh'; url: string });

export type InvalidationKind = InvalidationMessage['type'];

/** A peer's invalidation this node cannot read: on `/v1/peer/purge`, `ban` and `refresh`, a 400. */
export class MalformedInvalidationError extends MalformedRequestError {
  override readonly name = 'MalformedInvalidationError';
  override readonly code = 'malformed_invalidation';
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

/**
 * The message `value` describes, keeping only its known fields, or undefined when it is not one. For
 * JSON parsed from the network: batches and catch-up carry messages inside larger documents.
 */
export function invalidationFrom(value: unknown): InvalidationMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  const { id, at } = message;
  if (!isString(id) || id.length === 0 || id.length > MAX_INVALIDATION_ID_LENGTH) return undefined;
  if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) return undefined;
  switch (message.type) {
    case 'purge':
    case 'refresh':
      return isString(message.url) ? { id, at, type: message.type, url: message.url } : undefined;
    case 'purge_batch':
      return Array.isArray(message.urls) && message.urls.every(isString) ? { id, at, type: 'purge_batch', urls: message.urls } : undefined;
    case 'ban': {
      const { host_regex, path_regex, surrogate_key } = message;
      if (!isOptionalString(host_regex) || !isOptionalString(path_regex) || !isOptionalString(surrogate_key)) return undefined;
      const ban: InvalidationMessage = { id, at, type: 'ban' };
      if (host_regex !== undefined) ban.host_regex = host_regex as string;
      if (path_regex !== undefined) ban.path_regex = path_regex as string;
      if (surrogate_key !== undefined) ban.surrogate_key = surrogate_key as string;
      return ban;
    }
    default:
      return undefined;
  }
}

export function decodeInvalidation(bytes: Uint8Array): InvalidationMessage {
  if (bytes[0] !== INVALIDATION_WIRE_VERSION) throw new MalformedInvalidationError(`unknown invalidation wire version ${bytes[0]}`);
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes.subarray(1)));
  } catch {
    throw new MalformedInvalidationError('invalidation message is not JSON');
  }
  const message = invalidationFrom(value);
  if (message === undefined) throw new MalformedInvalidationError('invalidation message is malformed');
  return message;
}

/** How many URLs a message invalidates (a ban counts one): the unit the log and the batches are bounded in. */
export function invalidationWeight(message: InvalidationMessage): number {
  return message.type === 'purge_batch' ? Math.max(1, message.urls.length) : 1;
}
