// Hit-for-pass markers (Varnish's hit-for-miss objects): a key whose answer the origin made uncacheable
// is remembered for a short while, so the next wave of requests for it goes to the origin at once,
// each alone, instead of queueing behind one fill to learn the same thing. A marker holds no content,
// so nothing a client sent can be served to another through it; an answer that turns cacheable again
// is stored as usual and clears the marker.

/**
 * 120 s, Varnish's hit-for-miss lifetime (builtin.vcl `beresp.ttl = 120s` with `uncacheable`): a URL
 * answered uncacheable usually stays so, and a marker costs only the coalescing of one URL meanwhile.
 */
export const HIT_FOR_PASS_MS = 120_000;
/** Markers kept at most (oldest go first): about 100 bytes each, so a few MB at worst. */
export const MAX_HIT_FOR_PASS_MARKERS = 50_000;

export class HitForPassMarkers {
  /** Key → expiry (ms since the epoch); insertion order is marking order. */
  readonly #until = new Map<string, number>();

  constructor(
    private readonly lifetimeMs = HIT_FOR_PASS_MS,
    private readonly maxMarkers = MAX_HIT_FOR_PASS_MARKERS,
  ) {}

  mark(key: string, nowMs: number): void {
    this.#until.delete(key);
    this.#until.set(key, nowMs + this.lifetimeMs);
    if (this.#until.size > this.maxMarkers) this.#until.delete(this.#until.keys().next().value as string);
  }

  /** Whether `key` carries a live marker; an expired one is dropped. */
  has(key: string, nowMs: number): boolean {
    const until = this.#until.get(key);
    if (until === undefined) return false;
    if (until > nowMs) return true;
    this.#until.delete(key);
    return false;
  }

  clear(key: string): void {
    this.#until.delete(key);
  }
}
