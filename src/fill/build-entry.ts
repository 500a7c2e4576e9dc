// Turning an origin answer into a stored entry: the field list the client that asked gets, the one
// stored for every later client (forwardedFields, storedFields), the Vary secondary key, the surrogate
// keys, and the freshness facts, all computed once here so that hits do none of this work.
import { entryFields, type CacheEntry } from '../cache/entry.js';
import { headersFromRaw, type HeaderLookup } from '../cache/policy/header-lookup.js';
import { describeResponse } from '../cache/policy/describe-response.js';
import { forwardedFields, storedFields } from '../cache/policy/stored-fields.js';
import { surrogateKeys } from '../cache/policy/surrogate-keys.js';
import { varyNames, variantKey } from '../cache/policy/vary.js';
import { mergeNotModified } from '../cache/policy/not-modified.js';
import { canStore } from '../cache/policy/storability.js';
import type { RouteCacheOptions } from '../cache/policy/route-cache-options.js';
import type { OriginAnswer } from './origin-fetch.js';

type AnswerTimes = Pick<OriginAnswer, 'requestTimeMs' | 'responseTimeMs'>;

export interface EntryInput {
  key: string;
  requestHeaders: HeaderLookup;
  answer: Pick<OriginAnswer, 'statusCode' | 'fields'> & AnswerTimes;
  route: string;
  policy: RouteCacheOptions;
  /** Fields named by `private="…"` or `no-cache="…"`, never stored. */
  omitFields: readonly string[];
}

export interface EntryDraft {
  /**
   * The fields sent to the client whose request fetched the answer. They include what `private="…"`
   * and `no-cache="…"` name, which the stored entry leaves out.
   */
  clientFields: string[];
  /** Everything the entry will hold but its body (and the Content-Length a streamed body gets). */
  described: Omit<CacheEntry, 'body'>;
  /** The entry, once the whole body arrived. */
  complete(body: Buffer): CacheEntry;
}

/** Statuses whose responses never carry a body, so never a Content-Length (RFC 9110 §8.6). */
function hasNoContent(status: number): boolean {
  return status === 204 || status === 304 || status < 200;
}

export function buildEntry(input: EntryInput): EntryDraft {
  const { answer, policy } = input;
  const responseHeaders = headersFromRaw(answer.fields);
  const facts = describeResponse(responseHeaders, {
    status: answer.statusCode,
    requestTimeMs: answer.requestTimeMs,
    responseTimeMs: answer.responseTimeMs,
    ...policy,
  });
  const { names } = varyNames(responseHeaders);
  const storedHeaders = storedFields(answer.fields, input.omitFields);
  const described: Omit<CacheEntry, 'body'> = {
    key: input.key,
    variantKey: variantKey(names, input.requestHeaders),
    varyNames: names,
    status: answer.statusCode,
    headers: storedHeaders,
    requestTimeMs: answer.requestTimeMs,
    responseTimeMs: answer.responseTimeMs,
    ...facts,
    surrogateControl: responseHeaders('surrogate-control'),
    tags: surrogateKeys(responseHeaders),
    forcedStale: false,
    route: input.route,
  };
  return {
    clientFields: forwardedFields(answer.fields),
    described,
    complete(body) {
      let headers = storedHeaders;
      if (!hasNoContent(answer.statusCode) && responseHeaders('content-length') === undefined) {
        // The origin streamed it (chunked); stored, its length is known, and hits send it plainly.
        headers = [...storedHeaders, 'content-length', String(body.length)];
      }
      return { ...described, headers, body };
    },
  };
}

/**
 * RFC 9111 §4.3.4: the stored entry updated by a 304. The 304's fields replace the stored ones (never
 * the framing), freshness is computed again from the result, and the stored body is reused. Undefined
 * when the updated response may no longer be stored (the 304 said no-store, say): the caller serves
 * it once and drops the entry.
 */
export function entryFromNotModified(
  entry: CacheEntry,
  notModifiedFields: readonly string[],
  requestHeaders: HeaderLookup,
  times: AnswerTimes,
  policy: RouteCacheOptions,
): CacheEntry | undefined {
  const notModified = headersFromRaw(notModifiedFields);
  const merged = mergeNotModified(entry.headers, notModifiedFields);
  const surrogateControl = notModified('surrogate-control') ?? entry.surrogateControl;
  // What describes the updated response: the merged fields, the 304's Age, and the targeted field.
  const describing = [...merged];
  const age = notModified('age');
  if (age !== undefined) describing.push('age', age);
  if (surrogateControl !== undefined) describing.push('surrogate-control', surrogateControl);
  const headers = headersFromRaw(describing);
  const verdict = canStore(
    { method: 'GET', headers: requestHeaders },
    { status: entry.status, headers, responseTimeMs: times.responseTimeMs },
    policy,
  );
  if (!verdict.store) return undefined;
  const facts = describeResponse(headers, { status: entry.status, ...times, ...policy });
  const tags = surrogateKeys(headers);
  return {
    ...entryFields(entry),
    headers: storedFields(merged, verdict.omitFields),
    requestTimeMs: times.requestTimeMs,
    responseTimeMs: times.responseTimeMs,
    ...facts,
    surrogateControl,
    tags: tags.length > 0 ? tags : entry.tags,
    forcedStale: false,
  };
}
