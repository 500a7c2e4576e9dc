// What svc's simulator scenarios make and check: a mixed workload of invalidations (purges of a pool
// of URLs, so newer ones cover older ones, bans, refreshes, batches), and the properties issue 16 asks
// of their delivery, read from what each node's recording engine was asked to do.
import type { Random } from '../../../cluster/index.js';
import { ORIGIN_CLOCK_SKEW_MS } from '../cluster-invalidator.js';
import type { EngineCall, RecordingEngine, SvcSimNodes } from './svc-sim-nodes.js';

/** An invalidation as it was made: the call on its origin's engine. */
export interface Made extends EngineCall {
  origin: number;
}

/** URLs the workload picks from: few enough that purges repeat, so compaction has work. */
const URL_POOL = 400;
const TAGS = 40;

/** Makes one random invalidation at node `origin`; resolves when that node has answered. */
export function makeInvalidation(nodes: SvcSimNodes, origin: number, random: Random): Promise<unknown> {
  const { invalidator } = nodes.life(origin);
  const url = (): string => `http://shop.example/item/${random.int(URL_POOL)}`;
  const draw = random.next();
  if (draw < 0.7) return invalidator.purge(url());
  if (draw < 0.8) return invalidator.ban({ surrogate_key: `tag-${random.int(TAGS)}` });
  if (draw < 0.9) return invalidator.refresh(url());
  return invalidator.purgeBatch(Array.from({ length: 1 + random.int(50) }, url));
}

/** Every invalidation made in the cluster: the calls on each engine whose id names that node. */
export function madeInvalidations(nodes: SvcSimNodes): Made[] {
  const made: Made[] = [];
  nodes.cluster.names.forEach((name, origin) => {
    for (const call of nodes.disks[origin]!.engine.calls) if (call.id.startsWith(`${name}.`)) made.push({ ...call, origin });
  });
  return made;
}

/** Whether `call` leaves nothing for `made` to do: a newer invalidation of what it invalidates. */
function covers(call: EngineCall, made: Made): boolean {
  if (call.target !== made.target || call.atMs < made.atMs) return false;
  if (made.type === 'purge') return call.type === 'purge';
  if (made.type === 'refresh') return call.type === 'purge' || call.type === 'refresh';
  if (made.type === 'ban') return call.type === 'ban';
  return false;
}

/**
 * Whether `engine` had done, by `byMs`, what `made` asks of it: applied it, applied one that covers it,
 * or distrusted everything older (a catch-up gap).
 */
export function honoured(engine: RecordingEngine, made: Made, byMs: number): boolean {
  if (engine.gapsBeforeMs.some((gapMs) => gapMs >= made.atMs)) return true;
  return engine.calls.some((call) => call.calledMs <= byMs && (call.id === made.id || covers(call, made)));
}

/** Invalidations applied more than once on one node, over all its lives: "id@node" each. */
export function appliedTwice(nodes: SvcSimNodes): string[] {
  const twice: string[] = [];
  nodes.disks.forEach((disk, index) => {
    const seen = new Set<string>();
    for (const call of disk.engine.calls) {
      if (seen.has(call.id)) twice.push(`${call.id}@${index}`);
      seen.add(call.id);
    }
  });
  return twice;
}

/** Invalidations a node applied as of a later time than they were made (plus the skew margin). */
export function appliedAsNew(nodes: SvcSimNodes, made: readonly Made[]): string[] {
  const madeAt = new Map(made.map((m) => [m.id, m.atMs]));
  const late: string[] = [];
  nodes.disks.forEach((disk, index) => {
    for (const call of disk.engine.calls) {
      const at = madeAt.get(call.id);
      if (at !== undefined && call.atMs > at + ORIGIN_CLOCK_SKEW_MS) late.push(`${call.id}@${index}`);
    }
  });
  return late;
}

/** The first few items of a list of failures, for a check's detail. */
export function firstOf(items: readonly string[], what: string): string {
  return items.length === 0 ? `no ${what}` : `${items.length} ${what}: ${items.slice(0, 3).join(', ')}`;
}
