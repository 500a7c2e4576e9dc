// A data-plane worker's hits on refresh-enabled routes, reported to the main thread, where background
// refresh keeps one registry for the node (docs/background-refresh.md). Hits are summed per variant
// and sent in one message every REPORT_EVERY_MS: a hit costs a map update, not a message.
import type { ServedHook } from '../../proxy/cache-flow.js';
import { refetchRequestOf } from '../../refresh/refetch-request.js';
import type { ServedReport } from './thread-messages.js';

/** Popularity is counted over lifetimes of seconds or more: a tenth of a second late changes nothing. */
const REPORT_EVERY_MS = 100;

type Hit = ServedReport['hits'][number];

export class ServedReporter {
  readonly #hits = new Map<string, Hit>();
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly send: (report: ServedReport) => void) {
    this.#timer = setInterval(() => this.flush(), REPORT_EVERY_MS);
    this.#timer.unref();
  }

  /** The cache flow's hook (CacheFlowDeps.onServedFromCache). */
  readonly hook: ServedHook = (entry, request, route) => {
    const id = `${route.label}\u0000${entry.key}\u0000${entry.variantKey}\u0000${entry.responseTimeMs}`;
    const hit = this.#hits.get(id);
    if (hit !== undefined) {
      hit.count += 1;
      return;
    }
    const served = {
      key: entry.key,
      variantKey: entry.variantKey,
      correctedInitialAgeMs: entry.correctedInitialAgeMs,
      responseTimeMs: entry.responseTimeMs,
      freshnessLifetimeMs: entry.freshnessLifetimeMs,
      staleWhileRevalidateMs: entry.staleWhileRevalidateMs,
      staleIfErrorMs: entry.staleIfErrorMs,
      mustRevalidate: entry.mustRevalidate,
      noCache: entry.noCache,
      forcedStale: entry.forcedStale,
    };
    this.#hits.set(id, { route: route.label, entry: served, request: refetchRequestOf(request, entry.varyNames), count: 1 });
  };

  close(): void {
    clearInterval(this.#timer);
    this.flush();
  }

  /** Sends what has been counted since the last report, now. */
  flush(): void {
    if (this.#hits.size === 0) return;
    this.send({ kind: 'served', hits: [...this.#hits.values()] });
    this.#hits.clear();
  }
}
