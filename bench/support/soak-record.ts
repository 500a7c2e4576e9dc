// What the soak saw, as it happens: per window (a sixth of the run, at most 5 minutes), requests by
// cache result and the latency of every HIT; every failed request on its own, with the connection it
// was on, so that the report can tell a failure on a killed thread's connection from any other.

/** A client connection, as the soak's client knows it. */
export interface ConnectionFacts {
  id: number;
  /** The client's end: the port the server saw as the remote one. */
  localPort: number | undefined;
  /** When the client began to open it. */
  openedAtMs: number;
  /** Answers it carried before the failure. */
  answered: number;
}

export interface FailedRequest {
  atMs: number;
  /** `ECONNRESET`, `timeout`, `status 502`, `body differs`… */
  what: string;
  path: string;
  connection: ConnectionFacts;
}

export class WindowTally {
  requests = 0;
  failures = 0;
  readonly byResult = new Map<string, number>();
  readonly hitLatenciesMs: number[] = [];
  constructor(
    readonly startMs: number,
    readonly endMs: number,
  ) {}
}

export class SoakRecorder {
  readonly windows: WindowTally[];
  readonly failures: FailedRequest[] = [];

  constructor(
    readonly startMs: number,
    readonly windowMs: number,
    windowCount: number,
  ) {
    this.windows = Array.from({ length: windowCount }, (_, i) => new WindowTally(startMs + i * windowMs, startMs + (i + 1) * windowMs));
  }

  /** The window `atMs` falls in (the last one for an answer that came after the end). */
  windowAt(atMs: number): WindowTally {
    const index = Math.floor((atMs - this.startMs) / this.windowMs);
    return this.windows[Math.min(Math.max(index, 0), this.windows.length - 1)]!;
  }

  answered(atMs: number, cacheResult: string, latencyMs: number): void {
    const window = this.windowAt(atMs);
    window.requests++;
    window.byResult.set(cacheResult, (window.byResult.get(cacheResult) ?? 0) + 1);
    if (cacheResult === 'HIT') window.hitLatenciesMs.push(latencyMs);
  }

  failed(failure: FailedRequest): void {
    const window = this.windowAt(failure.atMs);
    window.requests++;
    window.failures++;
    this.failures.push(failure);
  }
}
