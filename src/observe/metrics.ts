// The node's Prometheus metrics (spec §6.5), on one prom-client Registry per node so that several
// nodes in one process (tests, the simulator) never share counters. Store gauges are read from the
// stores when scraped, not pushed on every request.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TrafficMetrics, type RequestObservation } from './traffic-metrics.js';
import { registerEdgeMetrics, type EdgeMetrics } from './edge-metrics.js';
import { OPENMETRICS_CONTENT_TYPE, openMetricsText } from './openmetrics-text.js';

export type { CacheResult, RequestObservation, Source } from './traffic-metrics.js';

/** What a store shows to the metrics (the store objects themselves satisfy it). */
export interface StoreGaugeSource {
  readonly entryCount: number;
  readonly byteCount: number;
}

export interface HotStoreGaugeSource extends StoreGaugeSource {
  readonly evictionCount: number;
  readonly varyCapHits: number;
}

export interface WarmStoreGaugeSource extends StoreGaugeSource {
  readonly selfHeals: number;
  readonly droppedWrites: number;
  readonly lastSyncMs: number;
}

/** What the invalidation engine shows to the metrics (the engine itself satisfies it). */
export interface BanGaugeSource {
  readonly activeBanCount: number;
  readonly bansRefused: number;
}

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly traffic = new TrafficMetrics();
  private hot: HotStoreGaugeSource | undefined;
  private warm: WarmStoreGaugeSource | undefined;
  private bans: BanGaugeSource | undefined;
  readonly smugglingRejected: Counter;
  /** The edge's defences (src/observe/edge-metrics.ts). */
  readonly edge: EdgeMetrics;
  readonly startupPhase: Gauge<'phase'>;
  readonly startupConditionReady: Gauge<'condition'>;
  readonly startupDuration: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.traffic.register(this.registry);
    const gauge = (name: string, help: string, read: () => number | undefined): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read() ?? 0);
        },
      });
    };
    gauge('svc_hot_store_bytes', 'Bytes used by the hot tier.', () => this.hot?.byteCount);
    gauge('svc_hot_store_entries', 'Objects in the hot tier.', () => this.hot?.entryCount);
    gauge('svc_warm_store_bytes', 'Bytes in the warm tier.', () => this.warm?.byteCount);
    gauge('svc_warm_store_entries', 'Objects in the warm tier.', () => this.warm?.entryCount);
    gauge('svc_wal_last_sync_timestamp_seconds', 'Time of the last log sync: every warm-tier write made before it is on disk.', () =>
      this.warm ? this.warm.lastSyncMs / 1000 : 0,
    );
    const counterFrom = (name: string, help: string, read: () => number | undefined): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          // The store owns the count (monotonic since boot); the scrape copies it.
          this.reset();
          this.inc(read() ?? 0);
        },
      });
    };
    counterFrom('svc_hot_store_evictions_total', 'Objects evicted from the hot tier since boot.', () => this.hot?.evictionCount);
    counterFrom('svc_vary_cap_hits_total', 'Variant insertions rejected above 64 variants.', () => this.hot?.varyCapHits);
    counterFrom('svc_warm_store_self_heals_total', 'Warm-tier records that failed their checksum and were deleted.', () => this.warm?.selfHeals);
    counterFrom('svc_wal_dropped_entries_total', 'Warm-tier writes dropped because the write queue was full.', () => this.warm?.droppedWrites);
    gauge('svc_bans_active', 'Bans in force on this node.', () => this.bans?.activeBanCount);
    counterFrom('svc_bans_rejected_total', 'New bans refused because max_active_bans were in force.', () => this.bans?.bansRefused);

    this.smugglingRejected = new Counter({
      name: 'svc_http_smuggling_rejected_total',
      help: 'HTTP/1.1 requests rejected because their framing was ambiguous (request smuggling).',
      registers,
    });
    this.edge = registerEdgeMetrics(this.registry);
    this.startupPhase = new Gauge({
      name: 'svc_startup_phase',
      help: 'Startup phases: 1 while active, 0 once complete.',
      labelNames: ['phase'],
      registers,
    });
    this.startupConditionReady = new Gauge({
      name: 'svc_startup_condition_ready',
      help: 'Readiness conditions: 1 when met, 0 when not.',
      labelNames: ['condition'],
      registers,
    });
    this.startupDuration = new Histogram({
      name: 'svc_startup_duration_seconds',
      help: 'Time from process start to ready.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
  }

  bindStores(hot: HotStoreGaugeSource, warm?: WarmStoreGaugeSource): void {
    this.hot = hot;
    this.warm = warm;
  }

  bindBans(bans: BanGaugeSource): void {
    this.bans = bans;
  }

  observeRequest(observation: RequestObservation): void {
    this.traffic.observe(observation);
  }

  /** The registry in the Prometheus text format, or in OpenMetrics (with exemplars) when asked. */
  async exposition(openMetrics = false): Promise<{ contentType: string; body: string }> {
    if (openMetrics) return { contentType: OPENMETRICS_CONTENT_TYPE, body: await openMetricsText(this.registry) };
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
