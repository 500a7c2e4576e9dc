// Waiting on a condition, not on the clock: `eventually` reads a value until it is what the test
// expects or a deadline passes, and then fails with the last value it saw. Tests use it wherever
// something happens after the call that caused it returns (a log line relayed from a worker thread,
// a metric, a write made durable, a peer learning of another). It is the one poll helper of the tests;
// it is plain node, so fixtures running in a child process or a worker thread may use it too.
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** How long to keep reading; 10 s by default, far beyond what any condition here takes. */
  timeoutMs?: number;
  /** Between reads; 10 ms by default. */
  everyMs?: number;
  /**
   * Whether a read that throws (a server not listening yet, an answer not parseable yet) counts as
   * "not yet" instead of failing at once; its error is then the last value seen.
   */
  tolerateErrors?: boolean;
  /** More to say when the deadline passes (the output of the processes involved, say). */
  detail?: () => string | Promise<string>;
}

/**
 * Reads `read()` until `accept` holds for its value; resolves with that value. An `accept` that throws
 * (an assertion that the process waited on is still running) fails the wait at once.
 */
export async function eventually<T>(what: string, read: () => T | Promise<T>, accept: (value: T) => boolean, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let seen: { value: T } | { error: unknown };
    try {
      seen = { value: await read() };
    } catch (error) {
      if (options.tolerateErrors !== true) throw error;
      seen = { error };
    }
    if ('value' in seen && accept(seen.value)) return seen.value;
    if (Date.now() > deadline) {
      const detail = options.detail === undefined ? '' : `\n${await options.detail()}`;
      throw new Error(`${what} did not happen within ${timeoutMs} ms; last seen: ${inspect('value' in seen ? seen.value : seen, { depth: 4, breakLength: 120 })}${detail}`);
    }
    await sleep(options.everyMs ?? 10);
  }
}
