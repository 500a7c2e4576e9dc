// What the fill layer counts, for an operator to see slow clients cut off and fills the store gate
// kept out of the cache (docs/http-caching.md, "One fill per miss").
import { Counter, type Registry } from 'prom-client';
import type { CutReason } from './fill-reader.js';

export interface FillCounters {
  /** A client was cut off: its socket accepted nothing for the write-idle timeout, or it fell too far behind. */
  clientCut(reason: CutReason): void;
  /** A complete fill was not stored because an invalidation made since it started covers it. */
  storeRefused(): void;
}

export const NO_FILL_COUNTERS: FillCounters = { clientCut: () => undefined, storeRefused: () => undefined };

export function registerFillCounters(registry: Registry): FillCounters {
  const cut = new Counter({
    name: 'svc_fill_clients_cut_total',
    help: 'Clients cut off while reading a fill: reason write_idle (the socket accepted nothing for client_write_idle_timeout) or lag (more than max_object_bytes behind the fastest reader of a body too large to store).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'svc_fill_store_refused_total',
    help: 'Complete fills not stored because a purge, ban or refresh made after their origin request started covers them.',
    registers: [registry],
  });
  for (const reason of ['write_idle', 'lag'] satisfies CutReason[]) cut.inc({ reason }, 0);
  return {
    clientCut: (reason) => cut.inc({ reason }),
    storeRefused: () => refused.inc(),
  };
}
