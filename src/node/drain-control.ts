// Drain and the way back (spec §3.2; docs/operations.md "Drain"). `drain` takes the node out of
// service at once (readiness 503, no keep-alive in any thread) and resolves once in-flight data-plane
// requests finished; `undrain` puts it back. Each is applied after the ones called before it, so that
// every answer is true when it is sent: an undrain called during a drain waits for that drain to
// finish, a second drain waits for the first, and a drain after an undrain is a drain of its own.
import type { Logger } from '../observe/logger.js';
import type { DrainFlag } from './drain-flag.js';
import type { Readiness } from '../observe/readiness.js';

export interface DrainControlOptions {
  readiness: Readiness;
  /** What every data-plane thread reads. */
  flag: DrainFlag;
  logger: Logger;
  /** Resolves true once in-flight data-plane requests finished, false when the drain timed out. */
  waitForInFlight: () => Promise<boolean>;
}

export class DrainControl {
  /** The last step called: the next one runs after it. */
  #last: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DrainControlOptions) {}

  /** Takes the node out of service; resolves once in-flight requests finished (or the drain timed out). */
  drain(): Promise<void> {
    return this.#inTurn(async () => {
      const { readiness, flag, logger, waitForInFlight } = this.options;
      if (flag.isDraining()) return;
      flag.set(true);
      readiness.markDraining();
      logger.info('draining');
      const idle = await waitForInFlight();
      readiness.markDrained();
      logger.info({ timed_out: !idle }, 'drained');
    });
  }

  /** Puts a drained node back in service; nothing changes on a node that serves. */
  undrain(): Promise<void> {
    return this.#inTurn(() => {
      const { readiness, flag, logger } = this.options;
      if (!flag.isDraining()) return Promise.resolve();
      flag.set(false);
      readiness.markServing();
      logger.info('undrained: serving again');
      return Promise.resolve();
    });
  }

  #inTurn(step: () => Promise<void>): Promise<void> {
    const turn = this.#last.then(step);
    // A step that failed does not stop the ones after it; its caller sees the failure.
    this.#last = turn.catch(() => undefined);
    return turn;
  }
}
