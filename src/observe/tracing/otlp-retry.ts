// When a failed span export is tried again, as pure functions (OTLP specification, "OTLP/HTTP
// Response", "Retryable Response Codes" and "Throttling"): 429, 502, 503 and 504 and a connection
// that failed or broke are retried, with exponential back-off and jitter, honouring a Retry-After;
// any other answer is final. Every retry stays within the export's deadline, so a collector that is
// down costs a batch at most that long (BatchLimits.exportTimeoutMs), never a request.

/** Tries per export in all: OpenTelemetry's JavaScript exporter makes 1 + 5. */
export const MAX_ATTEMPTS = 6;
/** The first back-off: 1 s, then ×1.5 per retry (OpenTelemetry's JavaScript exporter's values). */
export const FIRST_BACKOFF_MS = 1_000;
const BACKOFF_MULTIPLIER = 1.5;
/** The back-off before jitter never grows past 5 s. */
const MAX_BACKOFF_MS = 5_000;
/** ±20% of the back-off, so nodes that failed together do not retry together. */
const JITTER = 0.2;

/** The statuses the OTLP specification lists as retryable. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** Network failures worth another try: the collector may be restarting or briefly unreachable. */
const RETRYABLE_NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_SOCKET']);

/** Whether a failed post (undici's error, or its cause) is worth another try. */
export function isRetryableNetworkError(error: unknown): boolean {
  const failure = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return [failure?.code, failure?.cause?.code].some((code) => typeof code === 'string' && RETRYABLE_NETWORK_CODES.has(code));
}

/**
 * How long to wait before attempt `attempt + 1` (after `attempt` failed, 1-based), or undefined when
 * the export gives up: no attempts left, or the wait would end past the deadline (`leftMs` from now).
 * A Retry-After (`retryAfterMs`) replaces the back-off. `random` is uniform in [0, 1).
 */
export function retryDelayMs(attempt: number, leftMs: number, retryAfterMs: number | undefined, random: () => number): number | undefined {
  if (attempt >= MAX_ATTEMPTS) return undefined;
  const backoff = Math.min(FIRST_BACKOFF_MS * BACKOFF_MULTIPLIER ** (attempt - 1), MAX_BACKOFF_MS);
  const delay = retryAfterMs ?? backoff * (1 + (random() * 2 - 1) * JITTER);
  return delay < leftMs ? delay : undefined;
}
