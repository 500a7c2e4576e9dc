// One bound on an exchange: the caller's timeout, the caller's AbortSignal and the transport's stop,
// whichever comes first, each reported as its own TransportErrorCode. Disposing clears the timer, so a
// finished exchange leaves nothing armed.
import { TransportError } from '../../cluster/transport.js';

export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly unlisten: Array<() => void> = [];
  private failure: TransportError | undefined;
  /** Rejects with the TransportError once the deadline passes; never resolves. */
  readonly expired: Promise<never>;
  private reject!: (error: TransportError) => void;

  constructor(what: string, timeoutMs: number, callerSignal: AbortSignal | undefined, stopSignal: AbortSignal) {
    this.expired = new Promise<never>((_resolve, reject) => {
      this.reject = reject;
    });
    // Raced against the work; the catch keeps an unraced expiry from being reported as unhandled.
    this.expired.catch(() => undefined);
    this.timer = setTimeout(() => this.fail(new TransportError('timeout', `${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    this.watch(stopSignal, () => new TransportError('closed', `${what}: the transport is stopped`));
    if (callerSignal !== undefined) this.watch(callerSignal, () => new TransportError('aborted', `${what} was aborted`, { cause: callerSignal.reason }));
  }

  /** Aborted when the deadline passes; hand it to every libp2p call of the exchange. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the deadline passed, or undefined while it has not. */
  get reason(): TransportError | undefined {
    return this.failure;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const unlisten of this.unlisten) unlisten();
    this.unlisten.length = 0;
  }

  private watch(signal: AbortSignal, failure: () => TransportError): void {
    if (this.failure !== undefined) return;
    if (signal.aborted) {
      this.fail(failure());
      return;
    }
    const listener = (): void => this.fail(failure());
    signal.addEventListener('abort', listener, { once: true });
    this.unlisten.push(() => signal.removeEventListener('abort', listener));
  }

  private fail(error: TransportError): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.dispose();
    this.controller.abort(error);
    this.reject(error);
  }
}
