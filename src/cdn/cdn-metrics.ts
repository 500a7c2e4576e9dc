// The CDN propagation metrics of spec §6.5, registered once per node registry (a reload that builds a
// new propagator keeps counting on the same series). Every label value is created at zero, so a
// dashboard sees `svc_cdn_purge_total{status="error"}` before the first error.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CDN_OPERATIONS, SKIP_REASONS, type CdnOperation, type SkipReason } from './purge-mapping.js';

export interface CdnMetrics {
  /** One CDN call's outcome (after its retries), counted once for each operation whose purges it carried. */
  call(operations: readonly CdnOperation[], status: 'ok' | 'error', seconds: number): void;
  skipped(reason: SkipReason): void;
  /** Reads the number of pending purges when scraped. */
  bindPending(read: () => number): void;
}

export function registerCdnMetrics(registry: Registry): CdnMetrics {
  const registers = [registry];
  const calls = new Counter({
    name: 'svc_cdn_purge_total',
    help: 'CDN purge calls by outcome after retries, once per operation (purge, ban, refresh) a call carried.',
    labelNames: ['operation', 'status'],
    registers,
  });
  const duration = new Histogram({
    name: 'svc_cdn_purge_duration_seconds',
    help: 'Time of one CDN purge call, its retries and their waits included.',
    labelNames: ['operation'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const skipped = new Counter({
    name: 'svc_cdn_purge_skipped_total',
    help: 'Invalidations not forwarded to the CDN, by reason (regex_metacharacters, path_without_host, queue_full).',
    labelNames: ['reason'],
    registers,
  });
  let readPending: () => number = () => 0;
  new Gauge({
    name: 'svc_cdn_purge_pending',
    help: 'CDN purges queued or under way, not yet confirmed.',
    registers,
    collect() {
      this.set(readPending());
    },
  });
  for (const operation of CDN_OPERATIONS) {
    for (const status of ['ok', 'error']) calls.inc({ operation, status }, 0);
  }
  for (const reason of SKIP_REASONS) skipped.inc({ reason }, 0);
  return {
    call(operations, status, seconds) {
      for (const operation of operations) {
        calls.inc({ operation, status });
        duration.observe({ operation }, seconds);
      }
    },
    skipped: (reason) => skipped.inc({ reason }),
    bindPending(read) {
      readPending = read;
    },
  };
}
