// Every request a listener refuses is logged once, with its reason, and counted
// (`svc_http_requests_rejected_total{listener,reason}`): the access log has fixed fields (spec §2.4)
// and never sees requests Node's parser refused, so this line is where a refusal is explained. The
// request id in it is the one the client's error answer shows. Query strings are not logged.
import type { Counter } from 'prom-client';
import type { Logger } from '../observe/logger.js';

export type ListenerName = 'data' | 'admin';

export interface Rejection {
  readonly status: number;
  /** Stable word: `missing_host`, `header_timeout`, `smuggling`… (docs/operations.md). */
  readonly reason: string;
  readonly requestId: string;
  /** `address:port` of the peer. */
  readonly remote: string;
  readonly method?: string | undefined;
  readonly host?: string | undefined;
  /** The target without its query. */
  readonly path?: string | undefined;
}

export interface RejectionLog {
  record(rejection: Rejection): void;
}

/**
 * Longest client-supplied text (method, Host, path) a rejection line carries: a refused request may
 * hold 16 KiB of header, and a flood of them must not write 16 KiB of log each.
 */
export const MAX_LOGGED_CHARS = 256;

function clip(text: string | undefined): string | undefined {
  return text === undefined || text.length <= MAX_LOGGED_CHARS ? text : `${text.slice(0, MAX_LOGGED_CHARS)}…`;
}

export function createRejectionLog(listener: ListenerName, logger: Logger, counter: Counter<'listener' | 'reason'>): RejectionLog {
  return {
    record(rejection) {
      counter.inc({ listener, reason: rejection.reason });
      const { requestId, method, host, path, ...fields } = rejection;
      logger.info({ listener, ...fields, method: clip(method), host: clip(host), path: clip(path), request_id: requestId }, 'rejected');
    },
  };
}

/** The target without its query (and what a query could hide), for a log line. */
export function pathForLog(target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  const query = target.indexOf('?');
  return query < 0 ? target : target.slice(0, query);
}
