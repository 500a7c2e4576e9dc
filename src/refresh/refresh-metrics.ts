// The background-refresh metrics of spec §6.5, registered only when a route has
// refresh_before_expiry. Every one carries `route`; the gauges are read from the refresher when
// scraped. Each route's counters start at 0 for every result and skip reason, so a dashboard sees
// the series before the first event.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RefreshErrorType } from './refresh-entry.js';

export type RefreshResult = '304' | '200' | 'error' | 'persist_cycle';

/** Why a refresh that came due (or was asked for) did not start; docs/background-refresh.md explains each. */
export type SkipReason =
  | 'not_found'
  | 'stale'
  | 'semaphore_full'
  | 'rate_limited'
  | 'not_registered'
  | 'bad_url'
  | 'below_min_hits'
  | 'negative';

/**
 * The `error_type` values: a refresh's; `internal_error` for a refresh that threw (a bug, logged);
 * `persist_failed` for a registry write that failed.
 */
export type RefreshMetricErrorType = RefreshErrorType | 'internal_error' | 'persist_failed';

const RESULTS: readonly RefreshResult[] = ['304', '200', 'error', 'persist_cycle'];
export const SKIP_REASONS: readonly SkipReason[] = [
  'not_found',
  'stale',
  'semaphore_full',
  'rate_limited',
  'not_registered',
  'bad_url',
  'below_min_hits',
  'negative',
];

/** What the gauges read, per route. */
export interface RefreshGaugeSource {
  inFlight(route: string): number;
  scheduled(route: string): number;
  registrySize(route: string): number;
}

export class RefreshMetrics {
  readonly #total: Counter<'route' | 'result'>;
  readonly #errors: Counter<'route' | 'error_type'>;
  readonly #skips: Counter<'route' | 'reason'>;

  constructor(registry: Registry, routes: readonly string[], source: RefreshGaugeSource) {
    const registers = [registry];
    this.#total = new Counter({
      name: 'svc_refresh_total',
      help: 'Background refreshes by result (304, 200, error), and registry persist cycles.',
      labelNames: ['route', 'result'],
      registers,
    });
    this.#errors = new Counter({
      name: 'svc_refresh_errors_total',
      help: 'Background refreshes that renewed nothing, and registry writes that failed, by error type.',
      labelNames: ['route', 'error_type'],
      registers,
    });
    this.#skips = new Counter({
      name: 'svc_refresh_skips_total',
      help: 'Background refreshes that came due but were not started, by reason.',
      labelNames: ['route', 'reason'],
      registers,
    });
    const gauge = (name: string, help: string, read: (route: string) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['route'],
        registers,
        collect() {
          for (const route of routes) this.set({ route }, read(route));
        },
      });
    };
    gauge('svc_refresh_in_flight', 'Background refreshes waiting for the origin.', (route) => source.inFlight(route));
    gauge('svc_refresh_scheduled', 'Background refreshes waiting to come due.', (route) => source.scheduled(route));
    gauge('svc_refresh_registry_size', 'Entries the refresh registry holds.', (route) => source.registrySize(route));
    for (const route of routes) {
      for (const result of RESULTS) this.#total.inc({ route, result }, 0);
      for (const reason of SKIP_REASONS) this.#skips.inc({ route, reason }, 0);
    }
  }

  result(route: string, result: RefreshResult): void {
    this.#total.inc({ route, result });
  }

  error(route: string, errorType: RefreshMetricErrorType): void {
    this.#errors.inc({ route, error_type: errorType });
  }

  skip(route: string, reason: SkipReason): void {
    this.#skips.inc({ route, reason });
  }
}
