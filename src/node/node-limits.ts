// The node's limits on origin traffic, counted once for all its threads: requests in flight on each
// upstream's connections (`pools[].connections`, `upload_connections`) and per client address
// (`limits.max_in_flight_per_client`). The main thread makes the memory; each thread counts in a
// column of its own (the main thread 0, worker `slot` slot + 1), which the main thread clears when a
// worker dies with requests in flight.
import { createCountersMemory, SharedCounters, type CountersMemory } from '../shared-memory/shared-counters.js';
import type { NodeLimits } from './routing.js';

/** Upstreams (pool × upstream × kind) a node can count: far more than any configuration names. */
const CONNECTION_ENTRIES = 1024;
/** Client addresses with origin requests in flight at once that a node counts exactly. */
const CLIENT_ENTRIES = 16_384;

export interface NodeLimitsMemory {
  readonly connections: CountersMemory;
  readonly clients: CountersMemory;
}

/** Memory for a node of `workers` data-plane threads (0 when the main thread serves alone). */
export function createNodeLimitsMemory(workers: number): NodeLimitsMemory {
  return {
    connections: createCountersMemory(CONNECTION_ENTRIES, workers + 1),
    clients: createCountersMemory(CLIENT_ENTRIES, workers + 1),
  };
}

/** The limits as the thread counting in `column` sees them. */
export function nodeLimits(memory: NodeLimitsMemory, column: number): NodeLimits {
  return { connections: new SharedCounters(memory.connections, column), clients: new SharedCounters(memory.clients, column) };
}

/** The column of worker `slot`. */
export function workerColumn(slot: number): number {
  return slot + 1;
}

/** For the main thread: drops what worker `slot` (thread `threadId`) counted, after it died. */
export function clearWorker(limits: NodeLimits, slot: number, threadId: number): void {
  limits.connections.clearThread(workerColumn(slot), threadId);
  limits.clients.clearThread(workerColumn(slot), threadId);
}
