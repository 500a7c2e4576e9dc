// Status codes and what a shared cache may do with them.

/**
 * "Heuristically cacheable" status codes (RFC 9110 §15.1): a response with one of these may be
 * stored and given a heuristic lifetime without explicit freshness. svc never stores 206 itself (it
 * stores complete responses and answers ranges from them), so 206 is listed for the RFC's sake only.
 */
export const HEURISTICALLY_CACHEABLE_STATUSES: ReadonlySet<number> = new Set([
  200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
]);

/**
 * Status codes whose caching requirements svc implements, for `must-understand` (RFC 9111
 * §5.2.2.3): a response carrying that directive with any other status is not stored.
 */
export const UNDERSTOOD_STATUSES: ReadonlySet<number> = new Set([
  200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501,
]);
