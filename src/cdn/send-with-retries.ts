// One CDN call with its retries (spec §6.3): the call is repeated while the retry policy allows it,
// after the wait the policy picks. Waits run on the injected timer, so tests see every wait the policy
// asked for without spending it.
import type { SetTimer } from '../runtime/timers.js';
import type { CallResult } from '../http/call-result.js';
import { retryDelayMs } from '../http/retry-policy.js';

export interface RetryTiming {
  setTimer: SetTimer;
  /** Uniform in [0, 1), for the jitter. */
  random: () => number;
}

export interface SentCall {
  /** The last answer: `ok`, or the failure that ended the retries. */
  result: CallResult;
  retries: number;
}

/** Runs `attempt` until it succeeds, is not to be retried, or `signal` ends it. */
export async function sendWithRetries(attempt: () => Promise<CallResult>, timing: RetryTiming, signal: AbortSignal): Promise<SentCall> {
  let retries = 0;
  for (;;) {
    const result = await attempt();
    const delayMs = retryDelayMs(result, retries + 1, timing.random);
    if (delayMs === undefined) return { result, retries };
    if (!(await wait(delayMs, timing.setTimer, signal))) return { result: { outcome: 'aborted' }, retries };
    retries++;
  }
}

/** Resolves true after `delayMs`, or false as soon as `signal` aborts. */
function wait(delayMs: number, setTimer: SetTimer, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      cancel();
      resolve(false);
    };
    const cancel = setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, delayMs);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
