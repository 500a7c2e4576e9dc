// One access-log record per request (spec §2.4), sampled as spec §6.6 says: `200 OK` responses
// 1 in 100, every other status always. The sampling is a counter, not a coin, so a test (and an
// operator) can tell exactly which 200s are written: the 1st, the 101st, the 201st…
// Query strings carry secrets (tokens, password-reset links, personal data), so the record's `path`
// shows one only as `log.access_query` says: not at all (the default), as a keyed hash, or whole.

import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from './logger.js';

export interface AccessRecord {
  method: string;
  host: string;
  /** The request target as received; the access log cuts or hashes its query string. */
  path: string;
  proto: string;
  status: number;
  bytes_out: number;
  dur_ms: number;
  cache_status: string;
  route: string;
  remote: string;
  /** Over TLS only (the spec's fields stay as they are for plain HTTP): `TLSv1.3`, the cipher's IANA name, ALPN's protocol. */
  tls_version?: string;
  tls_cipher?: string;
  tls_alpn?: string;
}

/** `log.access_query`: omit, hash or full (docs/configuration.md). */
export type AccessQueryMode = 'omit' | 'hash' | 'full';

/** Spec §6.6: one in this many `200` responses is logged. */
export const OK_SAMPLE_EVERY = 100;

/** Hex digits of the HMAC kept: 64 bits tell queries apart in any log an operator reads. */
const HASH_HEX_DIGITS = 16;

export interface AccessLog {
  /** Whether a response of this status is to be logged; counts the 200s it passes over. Ask once per
   * response, before building its record, so unsampled responses cost no record at all. */
  sampled(status: number): boolean;
  record(entry: AccessRecord): void;
  /** Changes how query strings are shown (a configuration reload). */
  setQueryMode(mode: AccessQueryMode): void;
}

/**
 * The path as logged. `hash` writes `?hmac:<hex>`, an HMAC-SHA-256 of the query under a key drawn at
 * process start: equal queries show equal hashes within one run of one node, and a dictionary of
 * likely values (short tokens, e-mail addresses) cannot be hashed to find them, as a plain hash could.
 */
export function loggedPath(target: string, mode: AccessQueryMode, hashKey: Uint8Array): string {
  const mark = target.indexOf('?');
  if (mark === -1 || mode === 'full') return target;
  const path = target.slice(0, mark);
  const query = target.slice(mark + 1);
  if (mode === 'omit' || query === '') return path;
  return `${path}?hmac:${createHmac('sha256', hashKey).update(query).digest('hex').slice(0, HASH_HEX_DIGITS)}`;
}

/** What the threads of one node share of their access logs, so that the node logs as one. */
export interface SharedAccessLog {
  /** The HMAC key of `hash` mode: equal queries hash equally whichever thread logged them. */
  readonly hashKey: Uint8Array;
  /** The node's count of 200 answers (one Int32), so that 1 in 100 is logged for the node. */
  readonly okSeen: SharedArrayBuffer;
}

export function sharedAccessLog(): SharedAccessLog {
  return { hashKey: randomBytes(32), okSeen: new SharedArrayBuffer(4) };
}

/** `shared`: the node's (sharedAccessLog), for a data-plane thread of several; one of its own otherwise. */
export function createAccessLog(logger: Logger, queryMode: AccessQueryMode = 'omit', shared: SharedAccessLog = sharedAccessLog()): AccessLog {
  const okSeen = new Int32Array(shared.okSeen);
  const hashKey = shared.hashKey;
  let mode = queryMode;
  return {
    sampled(status) {
      return status !== 200 || Atomics.add(okSeen, 0, 1) % OK_SAMPLE_EVERY === 0;
    },
    record(entry) {
      entry.path = loggedPath(entry.path, mode, hashKey);
      logger.info(entry, 'access');
    },
    setQueryMode(next) {
      mode = next;
    },
  };
}
