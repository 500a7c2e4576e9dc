// One soak run: an origin, `svc serve` on the defaults (a small warm tier), the paced clients, and on
// their schedules the invalidations, the reloads and the thread kills, while the node's memory is
// sampled; then the record, for soak-report.ts to turn into figures. bench/soak.ts runs it for 30
// minutes and prints the figures; test/soak/soak.test.ts runs it for 2 and checks them.
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { SoakClients } from './soak-clients.js';
import { SoakInvalidations, type AdminFailure } from './soak-invalidations.js';
import { MemorySampler, type MemorySample } from './soak-memory.js';
import { SoakMix } from './soak-mix.js';
import { SoakNode, SOAK_ADMIN_TOKEN, type ReloadOutcome } from './soak-node.js';
import { startSoakOrigin } from './soak-origin.js';
import { SoakRecorder, type FailedRequest, type WindowTally } from './soak-record.js';

const MINUTE_MS = 60_000;

export interface SoakOptions {
  durationMs: number;
  /** Client connections, each paced to its share of requestsPerSecond. */
  connections: number;
  requestsPerSecond: number;
  /** `warm.max_bytes`: small, so that the new paths overflow it and its eviction runs all along. */
  warmMaxBytes: number;
  /** `hot_max_bytes`; absent: svc's default (256 MiB). */
  hotMaxBytes?: number | undefined;
  /** Node's flags for `svc serve`'s process; none by default. */
  nodeFlags?: readonly string[] | undefined;
  /** A data-plane thread is killed at every multiple of this. */
  killEveryMs: number;
  /** A reload at half of this, then every this. */
  reloadEveryMs: number;
  /** An invalidation every this (soak-invalidations.ts). */
  invalidateEveryMs: number;
  /** The node's memory every this. */
  sampleEveryMs: number;
  seed: number;
  /** Told one line at the end of each window. */
  progress?: ((line: string) => void) | undefined;
}

/** The 30-minute soak's settings, each scaled down for a shorter run as the issue says. */
export function soakDefaults(durationMs: number): SoakOptions {
  return {
    durationMs,
    connections: 16,
    requestsPerSecond: 1_000,
    warmMaxBytes: 64 * 1024 * 1024,
    killEveryMs: Math.min(5 * MINUTE_MS, durationMs / 2),
    reloadEveryMs: Math.min(MINUTE_MS, durationMs / 2),
    invalidateEveryMs: 2_000,
    sampleEveryMs: Math.min(Math.max(durationMs / 120, 1_000), 5_000),
    seed: 1,
  };
}

/** The windows the figures are given per: 5 minutes, or a sixth of a shorter run. */
export function windowMsOf(durationMs: number): number {
  return Math.min(5 * MINUTE_MS, durationMs / 6);
}

export interface KillRecord {
  sentAtMs: number;
  reportedAtMs: number;
  /** undefined: the node had no data-plane thread to kill (workers: 1). */
  threadId: number | undefined;
  /** The client ports of the connections the thread held when it died. */
  ports: number[];
  /** When the supervisor's line saying the thread exited was read; undefined if it never came. */
  exitLoggedAtMs: number | undefined;
}

export interface SoakRecord {
  options: SoakOptions;
  startMs: number;
  windowMs: number;
  workers: number;
  windows: WindowTally[];
  /** Load average (1 min) at the end of each window: the machine is shared. */
  loadAverages: number[];
  failures: FailedRequest[];
  kills: KillRecord[];
  reloads: ReloadOutcome[];
  invalidations: Map<string, number>;
  adminFailures: AdminFailure[];
  samples: MemorySample[];
  warnings: Map<string, number>;
  originAnswered: Map<number, number>;
  /** How the node ended: exited by itself during the run (a crash), or on the soak's SIGTERM. */
  nodeExit: { during: boolean; code: number | null; signal: NodeJS.Signals | null };
  stderrTail: string[];
}

export async function runSoak(options: SoakOptions): Promise<SoakRecord> {
  const origin = await startSoakOrigin();
  const node = await SoakNode.start({ originUrl: origin.url, warmMaxBytes: options.warmMaxBytes, hotMaxBytes: options.hotMaxBytes, nodeFlags: options.nodeFlags }).catch(async (error: unknown) => {
    await origin.close();
    throw error;
  });
  options.progress?.(`svc serve: pid ${node.pid}, ${node.workers} data-plane threads, data ${node.dataUrl}, admin ${node.adminUrl}`);
  const windowMs = windowMsOf(options.durationMs);
  const windowCount = Math.round(options.durationMs / windowMs);
  const startMs = Date.now();
  const endMs = startMs + options.durationMs;
  const recorder = new SoakRecorder(startMs, windowMs, windowCount);
  const mix = new SoakMix(options.seed);
  const clients = new SoakClients({ dataUrl: node.dataUrl, connections: options.connections, requestsPerSecond: options.requestsPerSecond, mix, recorder });
  const invalidations = new SoakInvalidations(node.adminUrl, SOAK_ADMIN_TOKEN, mix);
  const sampler = new MemorySampler(node.pid, `${node.adminUrl}/metrics`);
  const kills: KillRecord[] = [];
  const reloads: ReloadOutcome[] = [];
  const loadAverages: number[] = [];
  // A node that exits on its own ends the run early, as does a step of the soak that breaks: the
  // schedules stop waiting.
  const ended = new AbortController();
  node.child.once('exit', () => ended.abort());

  /** Runs `act` at first, first + every, … while before the end; each waits for the one before. */
  const every = async (firstMs: number, everyMs: number, act: () => Promise<void>): Promise<void> => {
    for (let atMs = startMs + firstMs; atMs < endMs; atMs += everyMs) {
      try {
        await sleep(Math.max(0, atMs - Date.now()), undefined, { signal: ended.signal });
      } catch {
        return;
      }
      await act();
    }
  };
  const kill = async (): Promise<void> => {
    const sentAtMs = Date.now();
    const report = await node.kill();
    const killed = report.kind === 'killed' ? report : undefined;
    kills.push({ sentAtMs, reportedAtMs: Date.now(), threadId: killed?.threadId, ports: killed?.ports ?? [], exitLoggedAtMs: undefined });
  };
  const windowEnd = async (): Promise<void> => {
    loadAverages.push(loadavg()[0]!);
    const window = recorder.windows[loadAverages.length - 1];
    options.progress?.(`window ${loadAverages.length}/${windowCount}: ${window?.requests ?? 0} requests, ${window?.failures ?? 0} failed, load ${loadAverages.at(-1)!.toFixed(1)}`);
  };

  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let during = false;
  try {
    await sampler.sample();
    sampler.start(options.sampleEveryMs);
    clients.start();
    await Promise.all([
      every(options.invalidateEveryMs, options.invalidateEveryMs, () => invalidations.next()),
      every(options.reloadEveryMs / 2, options.reloadEveryMs, async () => void reloads.push(await node.reload())),
      every(options.killEveryMs, options.killEveryMs, kill),
      every(windowMs, windowMs, windowEnd),
      sleep(Math.max(0, endMs - Date.now()), undefined, { signal: ended.signal }).catch(() => undefined),
    ]);
    during = node.exited !== undefined;
  } finally {
    // Whatever broke, nothing the soak started outlives it.
    ended.abort();
    await clients.stop();
    await sampler.stop();
    if (node.exited === undefined) await sampler.sample();
    while (loadAverages.length < windowCount) await windowEnd();
    exit = await node.stop();
    await origin.close();
  }
  for (const record of kills) if (record.threadId !== undefined) record.exitLoggedAtMs = node.threadExits.get(record.threadId);
  return {
    options,
    startMs,
    windowMs,
    workers: node.workers,
    windows: recorder.windows,
    loadAverages,
    failures: recorder.failures,
    kills,
    reloads,
    invalidations: invalidations.done,
    adminFailures: invalidations.failures,
    samples: sampler.samples,
    warnings: node.warnings,
    originAnswered: origin.answered,
    nodeExit: { during, ...exit },
    stderrTail: node.stderrTail,
  };
}
