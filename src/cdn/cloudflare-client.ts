// One CDN API call: Cloudflare's zone purge, `POST {base}/zones/{zone_id}/purge_cache` with a bearer
// token and a JSON body naming one purge kind (`{"files": [...]}`, `{"tags": [...]}`,
// `{"prefixes": [...]}` or `{"hosts": [...]}`; the API takes one kind per request), classified for the
// retry rules. It never retries by itself (send-with-retries.ts does) and never lets the token into
// what it returns: every message is svc's own text, scrubbed of the token before it leaves.
import { Agent, request } from 'undici';
import type { CallResult } from '../http/call-result.js';
import type { PurgeKind } from './purge-mapping.js';
import { parseRetryAfterMs } from '../http/retry-policy.js';

/**
 * Values per call, for every kind: 30. Cloudflare's API reference for this call
 * (developers.cloudflare.com/api/resources/cache/methods/purge) says "For Zones on Free/Pro/Business
 * plan, you may purge up to 30 URLs in one API call" (500 on Enterprise) and "You may purge up to 30
 * tags, hosts, or prefixes in one API call"; its purge limits page
 * (developers.cloudflare.com/cache/how-to/purge-cache/, "Purge limits") has since raised "Max
 * operations per request" to 100 on every plan (500 URLs on Enterprise). 30 is accepted under both
 * pages on every plan, so a zone on any plan can be configured without a limit of its own.
 */
export const MAX_VALUES_PER_CALL = 30;

/** Of an answer's body, only this much is read: enough for the CDN's error text, bounded all the same. */
const MAX_BODY_BYTES = 64 * 1024;
/** Longest CDN error text kept in a message, so one log line and `last_error` stay readable. */
const MAX_DETAIL_CHARS = 300;

export interface CloudflareClientOptions {
  /** `cdn.api_base_url`, without the `/zones/...` part. */
  baseUrl: string;
  zoneId: string;
  /** Secret: it goes into the Authorization field and nowhere else. */
  token: string;
  /** `cdn.timeout`: the whole call, connection to last byte. */
  timeoutMs: number;
  /** ms since the epoch, for a Retry-After given as a date. */
  now: () => number;
}

export class CloudflareClient {
  readonly #endpoint: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #agent: Agent;

  constructor(options: CloudflareClientOptions) {
    if (options.token === '') throw new Error('CloudflareClient: the token must not be empty');
    this.#endpoint = `${options.baseUrl.replace(/\/+$/, '')}/zones/${encodeURIComponent(options.zoneId)}/purge_cache`;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs;
    this.#now = options.now;
    // One call at a time goes out (purge-queue.ts), so one kept-alive connection serves it.
    this.#agent = new Agent({ connections: 1, connect: { timeout: options.timeoutMs } });
  }

  /** The URL calls go to (no secret in it). */
  get endpoint(): string {
    return this.#endpoint;
  }

  /** Purges `values` of one kind; `signal` abandons the call when the node stops. */
  async purge(kind: PurgeKind, values: readonly string[], signal: AbortSignal): Promise<CallResult> {
    if (values.length === 0 || values.length > MAX_VALUES_PER_CALL) {
      throw new RangeError(`a CDN purge call carries 1 to ${MAX_VALUES_PER_CALL} values, got ${values.length}`);
    }
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await request(this.#endpoint, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ [kind]: values }),
        signal: AbortSignal.any([signal, timeout]),
      });
      const body = await readBounded(response.body);
      return this.#classify(response.statusCode, response.headers['retry-after'], body);
    } catch (error) {
      if (signal.aborted) return { outcome: 'aborted' };
      if (timeout.aborted) return { outcome: 'network_error', message: `the CDN API did not answer within ${this.#timeoutMs} ms` };
      return { outcome: 'network_error', message: this.#scrub(`the CDN API could not be reached: ${describeNetworkError(error)}`) };
    }
  }

  /** Closes the connection; calls under way are abandoned. */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  #classify(status: number, retryAfter: string | string[] | undefined, body: string): CallResult {
    const detail = this.#scrub(errorDetail(body));
    const message = `the CDN API answered ${status}${detail === '' ? '' : `: ${detail}`}`;
    if (status >= 200 && status < 300) {
      // Cloudflare's envelope says `"success": false` when a 200 did not purge (rare, but then it failed).
      return successFlag(body) === false ? { outcome: 'refused', status, message } : { outcome: 'ok' };
    }
    if (status === 429) {
      const retryAfterMs = parseRetryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, this.#now());
      return { outcome: 'rate_limited', retryAfterMs, message };
    }
    if (status >= 500) return { outcome: 'server_error', status, message };
    return { outcome: 'refused', status, message };
  }

  /** Nothing the CDN or the network says may carry the token onward. */
  #scrub(text: string): string {
    return text.split(this.#token).join('[redacted]');
  }
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function successFlag(body: string): boolean | undefined {
  const json = parseJson(body) as { success?: unknown } | undefined;
  return typeof json?.success === 'boolean' ? json.success : undefined;
}

/** The CDN's own words: Cloudflare's `errors: [{code, message}]`, else nothing (a body may be HTML). */
function errorDetail(body: string): string {
  const json = parseJson(body) as { errors?: unknown } | undefined;
  if (!Array.isArray(json?.errors)) return '';
  const parts = json.errors.flatMap((error: unknown) => {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (typeof message !== 'string') return [];
    return [typeof code === 'number' || typeof code === 'string' ? `${message} (code ${code})` : message];
  });
  const detail = parts.join('; ').replace(/[\r\n\t]+/g, ' ');
  return detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS - 3)}...` : detail;
}

/** `ECONNRESET: other side closed`: the system or undici code, and what it says, of the error or its cause. */
function describeNetworkError(error: unknown): string {
  const failure = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = [failure.cause?.code, failure.code].find((value): value is string => typeof value === 'string');
  const message = [failure.message, failure.cause?.message].find((value): value is string => typeof value === 'string' && value !== '');
  return [code, message].filter((part) => part !== undefined).join(': ') || 'unknown error';
}
