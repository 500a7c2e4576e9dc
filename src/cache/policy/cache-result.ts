// What `X-Cache` (and the `cache_result` metric label and the access log's `cache_status`) says for
// an origin answer to a cache lookup: a GET or HEAD on a caching route that found nothing it could
// serve. docs/http-caching.md ("X-Cache and cache_result") has the whole table and the reasons.
//
// The rule: MISS means the answer is stored, so that the next request for it can be a HIT, or the
// origin failed (a 5xx, or no answer): the lookup missed and the fill did not succeed, and counting
// that as anything but a miss would take outages out of the hit ratio. BYPASS means svc knew before
// the first byte that it would not keep the answer, because of what the request, the answer or svc's
// own limits say; such answers can never become hits, so they stay out of the hit ratio altogether.

/** The two results an origin answer to a lookup can have; HIT, STALE and REVALIDATED come from a stored response. */
export type OriginAnswerResult = 'MISS' | 'BYPASS';

export interface OriginAnswerFacts {
  readonly status: number;
  /** canStore's verdict on the answer. */
  readonly storable: boolean;
  /** The answer's Content-Length field, when it has one. */
  readonly contentLength: string | undefined;
  /** The largest body svc stores (`max_object_bytes`). */
  readonly maxObjectBytes: number;
  /** The key already has the most variants it may have (MaxVariants), and this variant is not one of them. */
  readonly atVaryCap: boolean;
}

/** What the answer's head says, written before its first byte. */
export function originAnswerResult(facts: OriginAnswerFacts): OriginAnswerResult {
  if (facts.status >= 500) return 'MISS';
  if (!facts.storable || facts.atVaryCap) return 'BYPASS';
  const length = facts.contentLength;
  return length !== undefined && /^\d{1,15}$/.test(length) && Number(length) > facts.maxObjectBytes ? 'BYPASS' : 'MISS';
}

/** What happened to an answer svc meant to store once its body ended: stored, not stored, or the body failed. */
export type FillOutcome = 'stored' | 'not_stored' | 'failed';

/**
 * What the metric and the access log count an answer as, once its body ended. The head may already
 * have said MISS for a body that then turned out too large to store (no Content-Length announced it),
 * or that the store refused: the head cannot be taken back, the count can.
 */
export function settledResult(status: number, outcome: FillOutcome): OriginAnswerResult {
  return status >= 500 || outcome !== 'not_stored' ? 'MISS' : 'BYPASS';
}
