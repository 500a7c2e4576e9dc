// The RFC requirements svc keeps as a shared cache, one entry per MUST or SHOULD (MUST NOT and SHOULD
// NOT included) that RFC 9111 states for a shared cache, plus the ones of RFC 9110 and RFC 9213 that
// bear on what svc stores and answers. Each is proved by a named test case in this directory, made
// with requirement() below, against a real svc node and a real origin; rfc-requirements.test.ts
// checks that every entry has one and prints the count. The requirements that cannot apply to svc are
// listed in NOT_APPLICABLE with the reason, and in docs/http-caching.md.
import { test } from 'node:test';

export type Level = 'MUST' | 'MUST NOT' | 'SHOULD' | 'SHOULD NOT';

export interface Requirement {
  /** The RFC and section, e.g. `RFC9111 §4.2.4`. */
  readonly id: string;
  readonly level: Level;
  /** What svc must (or should) do, in the RFC's words where they are short enough. */
  readonly text: string;
}

function rfc(id: string, level: Level, text: string): Requirement {
  return { id, level, text };
}

export const R = {
  // RFC 9111 §1.2.2
  deltaSecondsOverflow: rfc('RFC9111 §1.2.2', 'MUST', 'take a delta-seconds value too large to represent as 2147483648'),

  // RFC 9111 §3 and its subsections
  storeUnderstoodMethod: rfc('RFC9111 §3', 'MUST NOT', 'store a response to a request method it does not understand'),
  storeFinalStatus: rfc('RFC9111 §3', 'MUST NOT', 'store a response whose status code is not final'),
  storeUnderstoodPartialStatus: rfc('RFC9111 §3', 'MUST NOT', 'store a 206, a 304, or a must-understand response whose status code it does not understand'),
  storeNeedsPermission: rfc('RFC9111 §3', 'MUST NOT', 'store a response without public, Expires, max-age, s-maxage or a heuristically cacheable status code'),
  storeAuthorization: rfc('RFC9111 §3', 'MUST NOT', 'store (shared) a response to a request with Authorization unless a directive allows shared caching'),
  storeAllFields: rfc('RFC9111 §3.1', 'MUST', 'include all received header fields, unrecognised ones included, when storing'),
  storeNoProxyFields: rfc('RFC9111 §3.1', 'MUST NOT', 'store Proxy-Authenticate, Proxy-Authentication-Info or Proxy-Authorization'),
  storeNoTrailers: rfc('RFC9111 §3.1', 'MUST NOT', 'combine trailer fields with header fields'),
  updateWithNotModified: rfc('RFC9111 §3.2', 'MUST', 'add each header field of a 304 to the stored response, replacing the stored values'),
  updateOmitOnlyForIntegrity: rfc('RFC9111 §3.2', 'SHOULD', 'omit only the fields that keep the stored response whole when updating it'),
  incompleteNotStored: rfc('RFC9111 §3.3', 'MUST NOT', 'store an incomplete response without Range support for it'),
  incompleteNotUsed: rfc('RFC9111 §3.3', 'MUST NOT', 'use an incomplete response to answer a request'),
  partialMarked206: rfc('RFC9111 §3.3', 'MUST NOT', 'send a partial response without the 206 status code'),
  authorizationReuse: rfc('RFC9111 §3.5', 'MUST NOT', 'reuse a response to an Authorization request unless a directive allows it, and then conform to that directive'),

  // RFC 9111 §4
  reuseUriMatch: rfc('RFC9111 §4', 'MUST NOT', 'reuse a stored response for another target URI'),
  reuseMethodMatch: rfc('RFC9111 §4', 'MUST NOT', 'reuse a stored response for a method its own method does not answer'),
  ageOnReuse: rfc('RFC9111 §4', 'MUST', 'generate an Age field equal to current_age, replacing any present, when reusing without validation'),
  unsafeWriteThrough: rfc('RFC9111 §4', 'MUST', 'write requests with unsafe methods through to the origin'),
  mostRecent: rfc('RFC9111 §4', 'MUST', 'use the most recent response when more than one suitable response is stored'),
  varyMatch: rfc('RFC9111 §4.1', 'MUST NOT', 'use a stored response with Vary unless the nominated request fields match'),
  varyMostRecent: rfc('RFC9111 §4.1', 'SHOULD', 'choose the most recent stored response with a valid Vary when one of them omits Vary'),
  datesCaseInsensitive: rfc('RFC9111 §4.2', 'SHOULD', 'match HTTP-dates case-insensitively'),
  noLocalTimeZone: rfc('RFC9111 §4.2', 'MUST NOT', 'let local time zones influence age or expiration'),
  otherZoneInvalid: rfc('RFC9111 §4.2', 'SHOULD', 'consider a date with a zone other than GMT invalid for expiration'),
  noHeuristicWhenExplicit: rfc('RFC9111 §4.2.2', 'MUST NOT', 'use a heuristic when an explicit expiration time is present'),
  ageFromRequestTime: rfc('RFC9111 §4.2.3', 'MUST', 'count the corrected age from the time the request was initiated'),
  staleNotWhenForbidden: rfc('RFC9111 §4.2.4', 'MUST NOT', 'serve stale when no-cache, must-revalidate, s-maxage or proxy-revalidate forbids it'),
  staleOnlyWhenAllowed: rfc('RFC9111 §4.2.4', 'MUST NOT', 'serve stale unless disconnected or explicitly permitted'),
  validateWithEntityTag: rfc('RFC9111 §4.3.1', 'MUST', 'send the stored entity tag when validating'),
  validateWithLastModified: rfc('RFC9111 §4.3.1', 'SHOULD', 'send the stored Last-Modified in If-Modified-Since when validating one response'),
  evaluateClientConditions: rfc('RFC9111 §4.3.2', 'SHOULD', "evaluate a client's applicable preconditions against a stored 200"),
  noOriginOnlyConditions: rfc('RFC9111 §4.3.2', 'MUST NOT', 'evaluate preconditions meant for the origin, or for a resource it has no stored response of'),
  modifiedSinceUsesDate: rfc('RFC9111 §4.3.2', 'SHOULD', 'use the stored Date for If-Modified-Since when there is no Last-Modified'),
  notModifiedForOthers200: rfc('RFC9111 §4.3.2', 'MUST', "answer 200 from the updated stored response when the origin's 304 is not for the client's entity tags"),
  fullResponseWins: rfc('RFC9111 §4.3.3', 'MUST', 'use a full response to a validation request to satisfy the request'),
  notModifiedNoMatchNoUpdate: rfc('RFC9111 §4.3.4', 'MUST NOT', 'update a stored response with a 304 whose strong validator it does not have'),
  notModifiedUpdates: rfc('RFC9111 §4.3.4', 'MUST', 'update each selected stored response with the header fields of the 304'),
  invalidateTarget: rfc('RFC9111 §4.4', 'MUST', 'invalidate the target URI after a non-error answer to an unsafe method'),
  invalidateSameOriginOnly: rfc('RFC9111 §4.4', 'MUST NOT', 'invalidate a Location or Content-Location URI of another origin'),

  // RFC 9111 §5
  ageFirstMember: rfc('RFC9111 §5.1', 'SHOULD', 'use the first member of a list-based Age'),
  ageInvalidIgnored: rfc('RFC9111 §5.1', 'SHOULD', 'ignore an invalid Age'),
  passDirectives: rfc('RFC9111 §5.2', 'MUST', 'pass cache directives through in forwarded messages'),
  requestNoStore: rfc('RFC9111 §5.2.1.5', 'MUST NOT', 'store any part of a request with no-store or of its response'),
  onlyIfCached: rfc('RFC9111 §5.2.1.7', 'SHOULD', 'answer only-if-cached with a stored response or 504'),
  mustRevalidateStale: rfc('RFC9111 §5.2.2.2', 'MUST NOT', 'reuse a stale must-revalidate response before it is validated'),
  mustRevalidateDisconnected: rfc('RFC9111 §5.2.2.2', 'MUST', 'generate an error rather than reuse a stale must-revalidate response when disconnected'),
  mustRevalidate504: rfc('RFC9111 §5.2.2.2', 'SHOULD', 'make that error 504 (Gateway Timeout)'),
  mustUnderstand: rfc('RFC9111 §5.2.2.3', 'SHOULD', 'ignore no-store under must-understand when it implements the status code'),
  noCacheValidates: rfc('RFC9111 §5.2.2.4', 'MUST NOT', 'use a no-cache response without validating it'),
  noStore: rfc('RFC9111 §5.2.2.5', 'MUST NOT', 'store any part of a no-store response, or use it for another request'),
  noTransform: rfc('RFC9111 §5.2.2.6', 'MUST NOT', 'transform the content'),
  privateNotStored: rfc('RFC9111 §5.2.2.7', 'MUST NOT', 'store (shared) a response with unqualified private'),
  privateFieldsNotStored: rfc('RFC9111 §5.2.2.7', 'MUST NOT', 'store (shared) the fields a qualified private names'),
  proxyRevalidate: rfc('RFC9111 §5.2.2.8', 'MUST NOT', 'reuse (shared) a stale proxy-revalidate response before it is validated'),
  sMaxageRevalidate: rfc('RFC9111 §5.2.2.10', 'MUST NOT', 'reuse (shared) a stale s-maxage response before it is validated'),
  unknownDirectives: rfc('RFC9111 §5.2.3', 'MUST', 'ignore unrecognised cache directives'),
  expiresInvalidIsPast: rfc('RFC9111 §5.3', 'MUST', 'read an invalid Expires, "0" included, as already expired'),
  expiresIgnoredWithMaxAge: rfc('RFC9111 §5.3', 'MUST', 'ignore Expires when max-age is present'),
  expiresIgnoredWithSMaxage: rfc('RFC9111 §5.3', 'MUST', 'ignore Expires (shared) when s-maxage is present'),

  // RFC 9110
  datesAllFormats: rfc('RFC9110 §5.6.7', 'MUST', 'accept all three HTTP-date formats'),
  ifNoneMatchWeak: rfc('RFC9110 §13.1.2', 'MUST', 'compare If-None-Match entity tags weakly'),
  modifiedSinceIgnoredWithNoneMatch: rfc('RFC9110 §13.1.3', 'MUST', 'ignore If-Modified-Since when If-None-Match is present'),
  modifiedSinceInvalidIgnored: rfc('RFC9110 §13.1.3', 'MUST', 'ignore an If-Modified-Since that is not a valid HTTP-date'),
  ifRangeFalseIgnoresRange: rfc('RFC9110 §13.1.5', 'MUST', 'ignore Range when If-Range evaluates to false'),
  preconditionsOnlyFor2xx: rfc('RFC9110 §13.2.1', 'MUST', 'ignore preconditions when the answer without them would not be 2xx'),
  largeRangeNumbers: rfc('RFC9110 §14.1.2', 'MUST', 'parse large range positions without overflow'),
  rangeOnlyForGet: rfc('RFC9110 §14.2', 'MUST', 'ignore Range on a method other than GET'),
  rangeSatisfiable206: rfc('RFC9110 §14.2', 'SHOULD', 'answer a satisfiable single range with 206'),
  rangeUnsatisfiable416: rfc('RFC9110 §14.2', 'SHOULD', 'answer an unsatisfiable range with 416'),
  informationalNotToHttp10: rfc('RFC9110 §15.2', 'MUST NOT', 'send a 1xx response to an HTTP/1.0 client'),
  informationalForwarded: rfc('RFC9110 §15.2', 'MUST', 'forward 1xx responses (proxy) it did not ask for'),
  partialContentFields: rfc('RFC9110 §15.3.7', 'MUST', 'send in a 206 the Date, Cache-Control, ETag, Expires, Content-Location and Vary a 200 would have'),
  singlePartContentRange: rfc('RFC9110 §15.3.7.1', 'MUST', 'send Content-Range with a single-part 206'),
  notModifiedFields: rfc('RFC9110 §15.4.5', 'MUST', 'send in a 304 the Content-Location, Date, ETag, Vary, Cache-Control and Expires a 200 would have'),
  unsatisfiableContentRange: rfc('RFC9110 §15.5.17', 'SHOULD', 'send Content-Range with the current length in a 416'),

  // RFC 9213
  targetedWrongTypeIgnored: rfc('RFC9213 §2.1', 'SHOULD NOT', 'consume directive values of the wrong type'),
  targetedInvalidIgnored: rfc('RFC9213 §2.1', 'MUST', 'ignore an empty targeted field or one that does not parse'),
  targetedGoverns: rfc('RFC9213 §2.2', 'MUST', 'use the first valid, non-empty targeted field and ignore Cache-Control and Expires'),
  targetedOthersPassed: rfc('RFC9213 §2.2', 'MUST', "pass through, and not be changed by, targeted fields not on its target list"),
  targetedCoreDirectives: rfc('RFC9213 §2.2', 'MUST', 'implement max-age, must-revalidate, no-store, no-cache and private in a targeted field'),
  targetedOtherDirectives: rfc('RFC9213 §2.2', 'SHOULD', 'implement in a targeted field the other directives it supports in Cache-Control'),
} as const satisfies Record<string, Requirement>;

/**
 * Requirements of RFC 9111 for a shared cache that cannot apply to svc, with the reason. They are not
 * counted as covered; docs/http-caching.md lists them as well.
 */
export const NOT_APPLICABLE: readonly (Requirement & { why: string })[] = [
  { ...rfc('RFC9111 §3.4', 'MUST', 'update stored header fields when combining partial content'), why: 'svc never stores a 206 (tested under §3), so it never combines' },
  { ...rfc('RFC9111 §4', 'MUST', 'revalidate on every use when the cache has no clock'), why: 'svc has a clock' },
  { ...rfc('RFC9111 §4.2', 'MUST', 'round a parsed Expires down when its clock has less resolution'), why: "svc's clock has millisecond resolution, finer than an HTTP-date" },
  { ...rfc('RFC9111 §4.3.2', 'MUST NOT', "include a partial response's entity tag in an If-None-Match union"), why: 'svc never unites If-None-Match lists and never stores partial responses' },
  { ...rfc('RFC9111 §4.3.5', 'SHOULD', 'update or invalidate stored GET responses from a HEAD response (three requirements)'), why: 'svc never sends HEAD to an origin on a caching route' },
];

/** The test name of a requirement: `RFC9111 §3 MUST NOT store …`, with an optional case after a dash. */
export function requirementName(requirement: Requirement, detail?: string): string {
  const name = `${requirement.id} ${requirement.level} ${requirement.text}`;
  return detail === undefined ? name : `${name} — ${detail}`;
}

/**
 * A test case proving `requirement` (one of R); `detail` names the case when a requirement has several;
 * `skip` says why a pass cannot run it (test-protocol.ts).
 */
export function requirement(req: Requirement, fn: () => Promise<void>, detail?: string, skip: string | false = false): void {
  test(requirementName(req, detail), { skip }, fn);
}
