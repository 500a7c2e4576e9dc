// Counters of the defences at the edge (docs/security.md, "Edge"): requests refused before or
// instead of being served, wrong admin tokens, and errors caught by the last-resort handler.
import { Counter, type Registry } from 'prom-client';

export interface EdgeMetrics {
  /** Requests refused at a listener, by listener (`data`, `admin`) and reason (docs/operations.md). */
  readonly rejected: Counter<'listener' | 'reason'>;
  /** Admin requests whose bearer token was wrong, and those refused because their address was limited. */
  readonly adminAuthFailures: Counter<'result'>;
  /** Errors nothing else caught (`uncaughtException`, `unhandledRejection`), by kind. */
  readonly uncaughtErrors: Counter<'kind'>;
}

export function registerEdgeMetrics(registry: Registry): EdgeMetrics {
  const registers = [registry];
  return {
    rejected: new Counter({
      name: 'svc_http_requests_rejected_total',
      help: 'Requests refused at a listener (malformed, over a limit, timed out, smuggling), by listener and reason.',
      labelNames: ['listener', 'reason'],
      registers,
    }),
    adminAuthFailures: new Counter({
      name: 'svc_admin_auth_failures_total',
      help: 'Admin requests with a wrong bearer token (result="invalid_token") or refused while their address was rate limited (result="rate_limited").',
      labelNames: ['result'],
      registers,
    }),
    uncaughtErrors: new Counter({
      name: 'svc_uncaught_errors_total',
      help: 'Errors caught by the last-resort handler, by kind (uncaught_exception, unhandled_rejection).',
      labelNames: ['kind'],
      registers,
    }),
  };
}
