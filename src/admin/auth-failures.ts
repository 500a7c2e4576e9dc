// Wrong admin tokens per client address (config `admin.auth_failure_limit` per
// `admin.auth_failure_window`): past the limit, every token-protected request from that address gets
// 429 with Retry-After until its window ends, the right token included, so guessing gains nothing
// from continuing. Counted in fixed windows; the table is bounded.

export interface AuthFailureLimiterOptions {
  limit: number;
  windowMs: number;
  now: () => number;
  /** Addresses remembered at most; past it, expired windows go first, then the oldest. */
  maxAddresses?: number;
}

interface Window {
  startMs: number;
  failures: number;
}

/** 10,000 addresses: about a megabyte, more than a loopback or private admin listener ever sees. */
const DEFAULT_MAX_ADDRESSES = 10_000;

export class AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly maxAddresses: number;

  constructor(private readonly options: AuthFailureLimiterOptions) {
    this.maxAddresses = options.maxAddresses ?? DEFAULT_MAX_ADDRESSES;
  }

  /** How long `address` must wait before its token is checked again; 0 when it may try now. */
  blockedForMs(address: string): number {
    const window = this.windows.get(address);
    if (window === undefined || window.failures < this.options.limit) return 0;
    return Math.max(0, window.startMs + this.options.windowMs - this.options.now());
  }

  recordFailure(address: string): void {
    const nowMs = this.options.now();
    const window = this.windows.get(address);
    if (window !== undefined && nowMs < window.startMs + this.options.windowMs) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    this.windows.set(address, { startMs: nowMs, failures: 1 });
    if (this.windows.size > this.maxAddresses) this.evict(nowMs);
  }

  private evict(nowMs: number): void {
    for (const [address, window] of this.windows) {
      if (nowMs >= window.startMs + this.options.windowMs) this.windows.delete(address);
    }
    // Still full of live windows: the oldest go (Map keeps insertion order).
    for (const address of this.windows.keys()) {
      if (this.windows.size <= this.maxAddresses) break;
      this.windows.delete(address);
    }
  }
}
