// The soak's figures from its record: requests, failures split by whether a killed thread's
// connection explains them, memory at the end of warm-up and at the end, and per window the HIT
// latency. Also the text bench/soak.ts prints.
//
// Attribution. A failed request is put on a killed thread when, for one of the kills, either
// - its connection is one the thread held when it died (the thread reported the client ports of the
//   connections it had accepted and not closed, soak-thread-kill.ts), the connection was opened
//   before that report, and the failure came after the kill and within 15 s of it (the client's
//   timeout is 10 s); or
// - its connection was opened after the kill was asked for and before the node logged the thread's
//   exit, and failed before it carried any answer: the kernel hands each new connection to one of
//   the threads' listeners (SO_REUSEPORT) and a listener that closes resets the connections queued
//   on it, which the thread never accepted and so could not report.
// Either way the failure is a connection error or a timeout, never an answer: a status other than 200
// or a wrong body is always counted as "other".
import type { FailedRequest } from './soak-record.js';
import type { KillRecord, SoakRecord } from './soak-run.js';
import type { MemorySample } from './soak-memory.js';

const ATTRIBUTION_MS = 15_000;

export interface WindowFigures {
  fromS: number;
  toS: number;
  requests: number;
  requestsPerSecond: number;
  hits: number;
  hitRatio: number;
  hitP50Ms: number;
  hitP99Ms: number;
  hitMaxMs: number;
  failedOnKilled: number;
  failedOther: number;
  kills: number;
  reloads: number;
  loadAverage: number;
  /** The node's memory over the window's second half (its lowest sample, as for growth). */
  rssBytes: number;
  heapUsedBytes: number;
}

export interface Growth {
  atWarmUpBytes: number;
  atEndBytes: number;
  growthPct: number;
}

export interface SoakFigures {
  durationS: number;
  workers: number;
  requests: number;
  requestsPerSecond: number;
  byResult: Record<string, number>;
  failed: {
    onKilledThreads: number;
    /** Of those: on connections the thread held / queued on its closing listener. */
    heldAtKill: number;
    queuedAtListener: number;
    other: number;
    /** What the other failures were, by kind. */
    otherByWhat: Record<string, number>;
    /** The first other failures, for a report to show, with their time into the run. */
    otherFirst: (FailedRequest & { atS: number })[];
  };
  kills: { atS: number; threadId: number | undefined; connections: number; failures: number; exitLoggedAfterMs: number | undefined }[];
  reloads: { total: number; ok: number; notOk: string[] };
  invalidations: Record<string, number>;
  adminFailures: string[];
  memory: {
    /** The end of warm-up: see warmUpEnd. */
    warmUpEndS: number;
    /** Whether both tiers were at their bounds by then (else warm-up is the first window). */
    tiersFullAtWarmUp: boolean;
    /** Each level is the lowest sample over the half window before the moment. */
    spanS: number;
    samples: number;
    rss: Growth;
    anonymous: Growth;
    heapUsed: Growth;
    heapTotal: Growth;
    youngGeneration: Growth;
    external: Growth;
    warmBytesAtEnd: number;
    warmMaxBytes: number;
    warmEntriesAtEnd: number;
    hotBytesAtEnd: number;
  };
  windows: WindowFigures[];
  warnings: Record<string, number>;
  originAnswered: Record<string, number>;
  nodeExit: SoakRecord['nodeExit'];
}

/** The kill a failed request is put on, and by which rule; undefined when none explains it. */
function attributedKill(failure: FailedRequest, kills: KillRecord[]): { kill: KillRecord; rule: 'held' | 'queued' } | undefined {
  if (failure.what.startsWith('status ') || failure.what === 'body differs') return undefined;
  const { connection } = failure;
  for (const kill of kills) {
    if (failure.atMs < kill.sentAtMs || failure.atMs > kill.sentAtMs + ATTRIBUTION_MS) continue;
    if (connection.localPort !== undefined && kill.ports.includes(connection.localPort) && connection.openedAtMs <= kill.reportedAtMs) return { kill, rule: 'held' };
    const listenerClosedMs = kill.exitLoggedAtMs ?? kill.reportedAtMs;
    if (connection.answered === 0 && connection.openedAtMs >= kill.sentAtMs && connection.openedAtMs <= listenerClosedMs) return { kill, rule: 'queued' };
  }
  return undefined;
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

type MemoryField = 'rssBytes' | 'anonymousBytes' | 'heapUsedBytes' | 'heapTotalBytes' | 'youngGenerationBytes' | 'externalBytes';

/**
 * The level of one of the node's figures at `untilMs`: its lowest sample over the span before. The
 * heap's samples go up and down with every collection; the lowest is closest to what is live.
 */
function level(samples: readonly MemorySample[], field: MemoryField, untilMs: number, spanMs: number): number {
  const values = samples.filter((sample) => sample.atMs > untilMs - spanMs && sample.atMs <= untilMs).map((sample) => sample[field]);
  return values.length === 0 ? 0 : Math.min(...values);
}

function growth(samples: readonly MemorySample[], field: MemoryField, warmUpEndMs: number, endMs: number, spanMs: number): Growth {
  const atWarmUpBytes = level(samples, field, warmUpEndMs, spanMs);
  const atEndBytes = level(samples, field, endMs, spanMs);
  return { atWarmUpBytes, atEndBytes, growthPct: atWarmUpBytes === 0 ? 0 : (100 * (atEndBytes - atWarmUpBytes)) / atWarmUpBytes };
}

/**
 * Warm-up ends with the first window by the end of which both tiers are at their bounds: the hot tier
 * has evicted (its log has gone round once, so every page of it is in memory) and the warm tier holds
 * 90% of warm.max_bytes; the first window at least (the code compiled, the heaps grown to the load).
 * A tier still filling would count its own filling as growth. If they never fill, it is the first window.
 */
function warmUpEnd(record: SoakRecord): { endMs: number; tiersFull: boolean } {
  const { startMs, windowMs } = record;
  const full = record.samples.find((sample) => sample.hotEvictions > 0 && sample.warmBytes >= 0.9 * record.options.warmMaxBytes);
  if (full === undefined) return { endMs: startMs + windowMs, tiersFull: false };
  return { endMs: startMs + Math.max(1, Math.ceil((full.atMs - startMs) / windowMs)) * windowMs, tiersFull: true };
}

const counts = (map: Map<string | number, number>): Record<string, number> => Object.fromEntries([...map].map(([key, value]) => [String(key), value]));

export function soakFigures(record: SoakRecord): SoakFigures {
  const { startMs, windowMs, kills } = record;
  const spanMs = windowMs / 2;
  const attributed = record.failures.map((failure) => ({ failure, to: attributedKill(failure, kills) }));
  const other = attributed.filter((each) => each.to === undefined).map((each) => each.failure);
  const otherByWhat = new Map<string, number>();
  for (const failure of other) otherByWhat.set(failure.what, (otherByWhat.get(failure.what) ?? 0) + 1);
  const inWindow = (atMs: number, index: number): boolean => Math.min(Math.floor((atMs - startMs) / windowMs), record.windows.length - 1) === index;

  const windows = record.windows.map((window, index): WindowFigures => {
    const latencies = window.hitLatenciesMs.toSorted((a, b) => a - b);
    const hits = window.byResult.get('HIT') ?? 0;
    const failedOnKilled = attributed.filter((each) => each.to !== undefined && inWindow(each.failure.atMs, index)).length;
    return {
      fromS: (window.startMs - startMs) / 1000,
      toS: (window.endMs - startMs) / 1000,
      requests: window.requests,
      requestsPerSecond: window.requests / (windowMs / 1000),
      hits,
      hitRatio: window.requests === 0 ? 0 : hits / window.requests,
      hitP50Ms: percentile(latencies, 0.5),
      hitP99Ms: percentile(latencies, 0.99),
      hitMaxMs: latencies.at(-1) ?? 0,
      failedOnKilled,
      failedOther: window.failures - failedOnKilled,
      kills: kills.filter((kill) => inWindow(kill.sentAtMs, index)).length,
      reloads: record.reloads.filter((reload) => inWindow(reload.atMs, index)).length,
      loadAverage: record.loadAverages[index] ?? 0,
      rssBytes: level(record.samples, 'rssBytes', window.endMs, spanMs),
      heapUsedBytes: level(record.samples, 'heapUsedBytes', window.endMs, spanMs),
    };
  });

  const byResult = new Map<string, number>();
  for (const window of record.windows) for (const [result, count] of window.byResult) byResult.set(result, (byResult.get(result) ?? 0) + count);
  const requests = windows.reduce((sum, window) => sum + window.requests, 0);
  const durationS = record.options.durationMs / 1000;
  const warmUp = warmUpEnd(record);
  const warmUpEndMs = warmUp.endMs;
  const endMs = startMs + record.options.durationMs;
  const last = record.samples.at(-1);
  return {
    durationS,
    workers: record.workers,
    requests,
    requestsPerSecond: requests / durationS,
    byResult: counts(byResult),
    failed: {
      onKilledThreads: attributed.length - other.length,
      heldAtKill: attributed.filter((each) => each.to?.rule === 'held').length,
      queuedAtListener: attributed.filter((each) => each.to?.rule === 'queued').length,
      other: other.length,
      otherByWhat: counts(otherByWhat),
      otherFirst: other.slice(0, 20).map((failure) => ({ ...failure, atS: (failure.atMs - startMs) / 1000 })),
    },
    kills: kills.map((kill) => ({
      atS: (kill.sentAtMs - startMs) / 1000,
      threadId: kill.threadId,
      connections: kill.ports.length,
      failures: attributed.filter((each) => each.to?.kill === kill).length,
      exitLoggedAfterMs: kill.exitLoggedAtMs === undefined ? undefined : kill.exitLoggedAtMs - kill.sentAtMs,
    })),
    reloads: { total: record.reloads.length, ok: record.reloads.filter((reload) => reload.ok).length, notOk: record.reloads.filter((reload) => !reload.ok).map((reload) => `${reload.via}: ${reload.detail}`) },
    invalidations: counts(record.invalidations),
    adminFailures: record.adminFailures.map((failure) => `${failure.operation} at ${((failure.atMs - startMs) / 1000).toFixed(1)} s: ${failure.detail}`),
    memory: {
      warmUpEndS: (warmUpEndMs - startMs) / 1000,
      tiersFullAtWarmUp: warmUp.tiersFull,
      spanS: spanMs / 1000,
      samples: record.samples.length,
      rss: growth(record.samples, 'rssBytes', warmUpEndMs, endMs, spanMs),
      anonymous: growth(record.samples, 'anonymousBytes', warmUpEndMs, endMs, spanMs),
      heapUsed: growth(record.samples, 'heapUsedBytes', warmUpEndMs, endMs, spanMs),
      heapTotal: growth(record.samples, 'heapTotalBytes', warmUpEndMs, endMs, spanMs),
      youngGeneration: growth(record.samples, 'youngGenerationBytes', warmUpEndMs, endMs, spanMs),
      external: growth(record.samples, 'externalBytes', warmUpEndMs, endMs, spanMs),
      warmBytesAtEnd: last?.warmBytes ?? 0,
      warmMaxBytes: record.options.warmMaxBytes,
      warmEntriesAtEnd: last?.warmEntries ?? 0,
      hotBytesAtEnd: last?.hotBytes ?? 0,
    },
    windows,
    warnings: counts(record.warnings),
    originAnswered: counts(record.originAnswered),
    nodeExit: record.nodeExit,
  };
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (value: number): string => value.toFixed(2);
const growthLine = (name: string, figures: Growth): string => `${name.padEnd(10)} ${mib(figures.atWarmUpBytes).padStart(11)} → ${mib(figures.atEndBytes).padStart(11)}  ${figures.growthPct >= 0 ? '+' : ''}${figures.growthPct.toFixed(2)} %`;

/** The figures as the text bench/soak.ts prints: a Markdown table of the windows, then the rest. */
export function formatSoakFigures(figures: SoakFigures): string {
  const { failed, memory } = figures;
  const lines = [
    `${figures.requests} requests in ${figures.durationS} s (${figures.requestsPerSecond.toFixed(0)}/s), ${figures.workers} data-plane threads: ${Object.entries(figures.byResult)
      .map(([result, count]) => `${result} ${count}`)
      .join(', ')}`,
    `failed: ${failed.onKilledThreads} on killed threads' connections (${failed.heldAtKill} held at the kill, ${failed.queuedAtListener} queued at the closing listener), ${failed.other} other${failed.other > 0 ? ` (${Object.entries(failed.otherByWhat).map(([what, count]) => `${what} ${count}`).join(', ')})` : ''}`,
    '',
    '| window | requests/s | HIT ratio | HIT p50 ms | HIT p99 ms | HIT max ms | failed (killed thread / other) | kills | reloads | RSS | heap used | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...figures.windows.map(
      (window) =>
        `| ${window.fromS}–${window.toS} s | ${window.requestsPerSecond.toFixed(0)} | ${(100 * window.hitRatio).toFixed(1)} % | ${ms(window.hitP50Ms)} | ${ms(window.hitP99Ms)} | ${ms(window.hitMaxMs)} | ${window.failedOnKilled} / ${window.failedOther} | ${window.kills} | ${window.reloads} | ${mib(window.rssBytes)} | ${mib(window.heapUsedBytes)} | ${window.loadAverage.toFixed(1)} |`,
    ),
    '',
    `memory (lowest sample of the ${memory.spanS} s before the end of warm-up at ${memory.warmUpEndS} s${memory.tiersFullAtWarmUp ? ', both tiers at their bounds' : ', THE TIERS NEVER REACHED THEIR BOUNDS'}, and before the end; ${memory.samples} samples):`,
    growthLine('RSS', memory.rss),
    growthLine('anonymous', memory.anonymous),
    growthLine('heap used', memory.heapUsed),
    growthLine('heap total', memory.heapTotal),
    growthLine('young gen', memory.youngGeneration),
    growthLine('external', memory.external),
    `warm tier at the end: ${mib(memory.warmBytesAtEnd)} of ${mib(memory.warmMaxBytes)} (${memory.warmEntriesAtEnd} entries); hot tier ${mib(memory.hotBytesAtEnd)}`,
    '',
    `kills: ${figures.kills.map((kill) => `${kill.atS.toFixed(0)} s thread ${kill.threadId ?? 'none'} (${kill.connections} connections, ${kill.failures} failed, exit logged after ${kill.exitLoggedAfterMs ?? '?'} ms)`).join('; ') || 'none'}`,
    `reloads: ${figures.reloads.ok} of ${figures.reloads.total} applied${figures.reloads.notOk.length > 0 ? `; not: ${figures.reloads.notOk.join('; ')}` : ''}`,
    `invalidations: ${Object.entries(figures.invalidations).map(([name, count]) => `${name} ${count}`).join(', ')}${figures.adminFailures.length > 0 ? `; failed: ${figures.adminFailures.join('; ')}` : ''}`,
    `node log lines at warn and above: ${Object.entries(figures.warnings).map(([msg, count]) => `"${msg}" ${count}`).join(', ') || 'none'}`,
    `origin answered: ${Object.entries(figures.originAnswered).map(([status, count]) => `${status} ${count}`).join(', ')}`,
    `node: ${figures.nodeExit.during ? 'EXITED DURING THE SOAK' : 'stopped by SIGTERM'} (code ${figures.nodeExit.code}, signal ${figures.nodeExit.signal})`,
  ];
  if (failed.otherFirst.length > 0) lines.push('', 'first other failures:', ...failed.otherFirst.map((failure) => `  ${failure.atS.toFixed(3)} s ${failure.what} ${failure.path} connection ${failure.connection.id} port ${failure.connection.localPort} answered ${failure.connection.answered}`));
  return lines.join('\n');
}
