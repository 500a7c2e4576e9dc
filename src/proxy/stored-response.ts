// Answering a client from a stored entry: the whole response, a 304 when the client's validators
// match (RFC 9110 §13), or one byte range of it (RFC 9110 §14). The stored field list is written as
// is, with only `Age` and `X-Cache` added: no stored header is parsed again and the body is never
// copied (a range is a view into it). If-Match and If-Unmodified-Since never reach here: the cache
// flow forwards them to the origin (RFC 9111 §4.3.2).
import type { CacheEntry } from '../cache/entry.js';
import type { CacheResult, Source } from '../observe/metrics.js';
import type { HeaderLookup } from '../cache/policy/header-lookup.js';
import { ageSeconds } from '../cache/policy/age.js';
import { evaluateConditional, notModifiedFields } from '../cache/policy/conditional.js';
import { parseRange } from '../cache/policy/range.js';
import type { Exchange } from './exchange.js';
import { fieldsWithAge, writeStoredHead } from './stored-head.js';

export function serveStored(
  exchange: Exchange,
  entry: CacheEntry,
  requestHeaders: HeaderLookup,
  cacheResult: CacheResult,
  source: Source,
  nowMs: number,
): void {
  exchange.served(cacheResult, source);
  const { response } = exchange;
  const age = String(ageSeconds(entry, nowMs));
  const isHead = exchange.request.method === 'HEAD';

  const condition = evaluateConditional(requestHeaders, entry);
  if (condition === 'not_modified') {
    const fields = notModifiedFields(entry.headers);
    fields.push('age', age, 'x-cache', cacheResult);
    response.writeHead(304, fields);
    response.end();
    return;
  }

  if (entry.status === 200 && !isHead) {
    const range = parseRange(requestHeaders, entry);
    if (range.kind === 'unsatisfiable') {
      response.writeHead(416, ['content-range', `bytes */${entry.body.length}`, 'content-length', '0', 'x-cache', cacheResult]);
      response.end();
      return;
    }
    if (range.kind === 'single') {
      const part = entry.body.subarray(range.start, range.end + 1);
      const fields = withoutContentLength(entry.headers);
      fields.push(
        'content-range', `bytes ${range.start}-${range.end}/${entry.body.length}`,
        'content-length', String(part.length),
        'age', age,
        'x-cache', cacheResult,
      );
      response.writeHead(206, fields);
      exchange.bytesOut += part.length;
      response.end(part);
      return;
    }
  }

  writeStoredHead(response, entry.status, entry.headers, age, cacheResult);
  if (isHead) {
    response.end();
    return;
  }
  exchange.bytesOut += entry.body.length;
  response.end(entry.body);
}

/** The fields of a whole stored response as svc sends it: the stored ones plus Age and X-Cache. */
export function storedFields(entry: CacheEntry, cacheResult: CacheResult, nowMs: number): string[] {
  return fieldsWithAge(entry.headers, String(ageSeconds(entry, nowMs)), cacheResult);
}

function withoutContentLength(fields: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i]!.toLowerCase() !== 'content-length') kept.push(fields[i]!, fields[i + 1]!);
  }
  return kept;
}
