// Waiting on a condition, not on the clock: `eventually` reads a value until it is what the test
// expects or a deadline passes, and then fails with the last value it saw. Tests use it wherever
// something happens after the call that caused it returns (a log line relayed from a worker thread,
// a metric, a write made durable).
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** How long to keep reading; 10 s by default, far beyond what any condition here takes. */
  timeoutMs?: number;
  /** Between reads. */
  everyMs?: number;
}

/** Reads `read()` until `accept` holds for its value; resolves with that value. */
export async function eventually<T>(what: string, read: () => T | Promise<T>, accept: (value: T) => boolean, options: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${options.timeoutMs ?? 10_000} ms; last seen: ${inspect(value, { depth: 4, breakLength: 120 })}`);
    await sleep(options.everyMs ?? 10);
  }
}
