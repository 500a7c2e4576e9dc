// svc's OTLP/HTTP span exporter: the batch span processor hands it a batch, it encodes the batch as
// OTLP JSON (OpenTelemetry's own serializer, the encoding its HTTP exporter sends) and posts it to
// the collector's `/v1/traces` through an undici pool of its own, retrying as otlp-retry.ts says.
//
// Why not @opentelemetry/exporter-trace-otlp-http: it posts with Node's `http` client, whose
// ClientRequest objects pass through the same OutgoingMessage and stream functions as every response
// svc writes. In a process whose other clients all use undici, that once-a-second export was enough
// to make those functions' property loads megamorphic on the hit path (docs/observability.md, "What
// tracing costs"; docs/performance.md).
import { setTimeout as sleep } from 'node:timers/promises';
import { ExportResultCode, globalErrorHandler, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { Pool } from 'undici';
import { parseRetryAfterMs } from '../../http/retry-policy.js';
import { isRetryableNetworkError, isRetryableStatus, retryDelayMs } from './otlp-retry.js';

export interface OtlpHttpExporterOptions {
  /** `http://host:port/v1/traces` (otlp-endpoint.ts). */
  url: string;
  /** One export, connection to last byte and every retry included (BatchLimits.exportTimeoutMs). */
  timeoutMs: number;
  /** The User-Agent field the collector sees. */
  userAgent: string;
}

/**
 * Connections to the collector: 2. The batch processor exports one batch at a time; only a flush
 * (shutdown) sends several at once, and those may wait for a connection.
 */
const CONNECTIONS = 2;
/** Of a collector's answer only this much is read (OTLP answers are a few bytes), then it is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** One post's outcome: done, or failed with whether (and after how long) to try again. */
type PostOutcome = { ok: true } | { ok: false; error: Error; retryable: boolean; retryAfterMs?: number | undefined };

export class OtlpHttpSpanExporter implements SpanExporter {
  readonly #pool: Pool;
  readonly #path: string;
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  /** Exports under way, for forceFlush and shutdown. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Aborted by destroy(): posts and retry waits under way give up at once. */
  readonly #abandon = new AbortController();
  #stopped = false;

  constructor(options: OtlpHttpExporterOptions) {
    const url = new URL(options.url);
    this.#path = url.pathname;
    this.#timeoutMs = options.timeoutMs;
    this.#headers = { 'content-type': 'application/json', 'user-agent': options.userAgent };
    this.#pool = new Pool(url.origin, { connections: CONNECTIONS, connectTimeout: options.timeoutMs });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.#stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('the span exporter is shut down') });
      return;
    }
    const body = JsonTraceSerializer.serializeRequest(spans);
    if (body === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('the spans could not be encoded') });
      return;
    }
    const exported = this.#send(body)
      .then((result) => {
        this.#inFlight.delete(exported);
        resultCallback(result);
      })
      .catch(globalErrorHandler);
    this.#inFlight.add(exported);
  }

  /** Resolves when every export under way has ended (each is bounded by its timeout). */
  async forceFlush(): Promise<void> {
    await Promise.all(this.#inFlight);
  }

  /** Takes no more exports, lets those under way end, then closes the connections. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    await this.forceFlush();
    await this.#pool.close();
  }

  /** Stops now: exports under way fail (their spans are counted dropped) and connections close. */
  async destroy(): Promise<void> {
    this.#stopped = true;
    this.#abandon.abort();
    await this.#pool.destroy();
  }

  /** Posts `body` until it is taken, refused for good, or the deadline has passed. */
  async #send(body: Uint8Array): Promise<ExportResult> {
    const deadline = Date.now() + this.#timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#post(body, deadline - Date.now());
      if (outcome.ok) return { code: ExportResultCode.SUCCESS };
      const delay = outcome.retryable ? retryDelayMs(attempt, deadline - Date.now(), outcome.retryAfterMs, Math.random) : undefined;
      if (delay === undefined) return { code: ExportResultCode.FAILED, error: outcome.error };
      try {
        await sleep(delay, undefined, { signal: this.#abandon.signal });
      } catch {
        return { code: ExportResultCode.FAILED, error: outcome.error };
      }
    }
  }

  async #post(body: Uint8Array, timeoutMs: number): Promise<PostOutcome> {
    const signal = AbortSignal.any([this.#abandon.signal, AbortSignal.timeout(Math.max(1, timeoutMs))]);
    try {
      const answer = await this.#pool.request({ path: this.#path, method: 'POST', headers: this.#headers, body, signal });
      // Read to its end (or its first 64 KiB) so the connection can carry the next export.
      await answer.body.dump({ limit: MAX_ANSWER_BYTES, signal });
      const status = answer.statusCode;
      if (status >= 200 && status < 300) return { ok: true };
      const error = new Error(`the collector answered ${status}`);
      if (!isRetryableStatus(status)) return { ok: false, error, retryable: false };
      const retryAfter = answer.headers['retry-after'];
      return { ok: false, error, retryable: true, retryAfterMs: parseRetryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()) };
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      return { ok: false, error: failure, retryable: !signal.aborted && isRetryableNetworkError(error) };
    }
  }
}
