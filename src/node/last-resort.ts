// The process's last resort (`svc serve`): an error nothing else caught is logged and counted
// (`svc_uncaught_errors_total{kind}`), and the node keeps serving while that is safe.
//
// What "safe" means here: every request handler, listener and timer of svc already catches its own
// errors, so one that escapes is a bug in one callback. Node has unwound that callback's stack; state
// it changed half-way (a map entry, a counter) can be wrong, but the listeners, the stores and the
// cluster membership are separate objects that each keep answering. One such error is not worth
// dropping every connection of a busy node. Many are: past `maxErrors` within `windowMs` the bug is
// on a hot path and the state can no longer be trusted, so the node stops cleanly (listeners closed,
// warm tier flushed) and the process exits with status 70 (EX_SOFTWARE) for its supervisor to restart
// it. An unhandled promise rejection is handled the same way: the work that promise stood for is lost.
import type { Counter } from 'prom-client';
import type { Logger } from '../observe/logger.js';

export interface LastResortOptions {
  logger: Logger;
  counter: Counter<'kind'>;
  /** Stops the node cleanly; called once, when too many errors came too fast. */
  shutdown: () => Promise<void>;
  /** 10 errors… */
  maxErrors?: number;
  /** …within 60 s: more than a stray bug, less than a node that still works. */
  windowMs?: number;
  now?: () => number;
}

/** EX_SOFTWARE (sysexits.h): an internal software error. */
export const LAST_RESORT_EXIT_CODE = 70;
const DEFAULT_MAX_ERRORS = 10;
const DEFAULT_WINDOW_MS = 60_000;

type Kind = 'uncaught_exception' | 'unhandled_rejection';

/** Installs the handlers on `process`; returns the function that removes them. */
export function installLastResort(options: LastResortOptions): () => void {
  const { logger, counter } = options;
  const maxErrors = options.maxErrors ?? DEFAULT_MAX_ERRORS;
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  const now = options.now ?? Date.now;
  const recent: number[] = [];
  let stopping = false;

  const handle = (kind: Kind, error: unknown): void => {
    counter.inc({ kind });
    const atMs = now();
    recent.push(atMs);
    while (recent.length > 0 && recent[0]! <= atMs - windowMs) recent.shift();
    if (recent.length <= maxErrors) {
      logger.error({ err: error, kind }, 'uncaught error: logged, counted, still serving');
      return;
    }
    logger.fatal({ err: error, kind, errors: recent.length, window_ms: windowMs }, 'too many uncaught errors: stopping');
    if (stopping) return;
    stopping = true;
    options
      .shutdown()
      .catch((stopError: unknown) => logger.error({ err: stopError }, 'stopping after uncaught errors failed'))
      .finally(() => {
        logger.flush();
        process.exit(LAST_RESORT_EXIT_CODE);
      });
  };
  const onException = (error: unknown): void => handle('uncaught_exception', error);
  const onRejection = (reason: unknown): void => handle('unhandled_rejection', reason);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
