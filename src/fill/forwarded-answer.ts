// The head of a fill opened on another cache's answer: a peer that owns the key (strong mode's peer
// fetch) or the key's home thread of this node (home-routing.ts). That cache already judged the
// answer (stored it, or passed it on) and said how in X-Cache; the asking side streams it to its
// readers and keeps no copy. Its Age is the other cache's: a reader that joins later gets it aged by
// the time since, as from a stored entry.
import type { CacheResult } from '../observe/metrics.js';
import { headersFromRaw } from '../cache/policy/header-lookup.js';
import { surrogateKeys } from '../cache/policy/surrogate-keys.js';
import { varyNames, variantKey } from '../cache/policy/vary.js';
import { parseDeltaSeconds } from '../cache/policy/cache-control.js';
import type { AnswerHead } from './fill.js';

const CACHE_RESULTS: ReadonlySet<string> = new Set<CacheResult>(['HIT', 'MISS', 'STALE', 'BYPASS', 'REVALIDATED']);

/**
 * Whether an answer carries fields meant for the one client whose request fetched it: a Set-Cookie,
 * or fields a qualified `private="…"` or `no-cache="…"` names (RFC 9111 §5.2.2.4, §5.2.2.7). The
 * other cache stores such an answer without them; the asking side, which cannot tell which fields the
 * stored copy keeps, does not share that answer with the other readers of its fill.
 */
function hasFieldsForOneClient(fields: readonly string[]): boolean {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    if (name === 'set-cookie' || name === 'proxy-authentication-info') return true;
    if ((name === 'cache-control' || name === 'cdn-cache-control' || name === 'surrogate-control') && /(?:private|no-cache)\s*=/i.test(fields[i + 1]!)) return true;
  }
  return false;
}

/** What the other cache said it served the request as (its X-Cache); MISS when it said nothing valid. */
export function forwardedResult(fields: readonly string[]): CacheResult {
  const result = fields[fields.indexOf('x-cache') + 1];
  return result !== undefined && CACHE_RESULTS.has(result) ? (result as CacheResult) : 'MISS';
}

/**
 * The head of a fill over an answer with `status` and `fields` (lower-case names, as undici gives
 * them) to a request with `requestFields`. `shareable`: the request was plain, so the answer may go
 * to every reader when the other cache would share it too.
 */
export function forwardedAnswerHead(status: number, fields: readonly string[], requestFields: readonly string[], shareable: boolean, nowMs: number): AnswerHead {
  const cacheResult = forwardedResult(fields);
  const responseHeaders = headersFromRaw(fields);
  const shared = shareable && cacheResult !== 'BYPASS' && !hasFieldsForOneClient(fields);
  const kept: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    if (name === 'x-cache' || (shared && name === 'age')) continue;
    kept.push(name, fields[i + 1]!);
  }
  const vary = varyNames(responseHeaders);
  return {
    status,
    fields: kept,
    shareable: shared,
    varyNames: vary.names,
    variantKey: variantKey(vary.names, headersFromRaw(requestFields)),
    varyStar: vary.star,
    tags: surrogateKeys(responseHeaders),
    etag: responseHeaders('etag'),
    lastModified: responseHeaders('last-modified'),
    correctedInitialAgeMs: (parseDeltaSeconds(responseHeaders('age')) ?? 0) * 1000,
    responseTimeMs: nowMs,
  };
}
