// Starts a real svc node in this process on ephemeral ports, with its log lines captured and its
// clock under the test's control.
import { Writable } from 'node:stream';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/observe/logger.js';
import { startNode, type StartNodeOptions, type SvcNode } from '../../src/node/svc-node.js';
import { SharedClock } from '../../src/node/shared-clock.js';
import { checkAdminAnswers, stopCheckingAdminAnswers } from './openapi-conformance.js';
import { eventually } from './eventually.js';
import { testTlsConfig } from './test-protocol.js';

type LogLine = Record<string, unknown>;

/**
 * The node's log lines as they arrive. Lines come in batches (src/observe/logger.ts), from every
 * data-plane thread, a moment after the answer that caused them: a test that looks for a line caused by
 * its last step waits for it with `find`/`filter`, and does not rely on the order threads' batches arrive.
 */
export class LogCapture extends Writable {
  readonly lines: LogLine[] = [];
  readonly text: string[] = [];

  /** The first line `match` accepts, once it has arrived. */
  async find(what: string, match: (line: LogLine) => boolean): Promise<LogLine> {
    return (await eventually(what, () => this.lines.find(match), (line) => line !== undefined))!;
  }

  /** The lines `match` accepts, once there are at least `count`. */
  async filter(what: string, match: (line: LogLine) => boolean, count: number): Promise<LogLine[]> {
    return eventually(what, () => this.lines.filter(match), (lines) => lines.length >= count);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      this.text.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
}

/**
 * A clock the test moves by hand; starts at the real time so Date headers make sense. Real time
 * flows through it too (upstream cool-downs and refresh budgets wait on it), unless it is frozen:
 * then only `advance` moves it, for tests that assert an exact Age, which a second boundary
 * passing mid-test would otherwise move by one.
 */
/** The node's clock, which the test moves; every thread of the node reads it (SharedClock). */
export class ManualClock {
  readonly shared = SharedClock.create();
  constructor(frozen = false) {
    if (frozen) this.shared.freeze();
  }
  now = (): number => this.shared.now();
  advance(ms: number): void {
    this.shared.advance(ms);
  }
}

export interface SvcUnderTest {
  node: SvcNode;
  dataUrl: string;
  adminUrl: string;
  logs: LogCapture;
  clock: ManualClock;
  /** A temporary directory for this node's files, removed on stop. */
  dir: string;
  /** With `reloadable`: the file the node reloads from (JSON, which the YAML loader reads). */
  configFile: string | undefined;
  stop(): Promise<void>;
}

export interface SvcOptions {
  /** Extra or replacing top-level config keys (YAML shape). */
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Reuse a directory (restart tests); it is then not removed on stop. */
  dir?: string;
  /** Give the node a clock that only `advance` moves (see ManualClock). */
  frozenClock?: boolean;
  /** The CDN propagation's timers and jitter (see StartNodeOptions). */
  cdnTiming?: StartNodeOptions['cdnTiming'];
  /** Run from a configuration file in `dir`, so that the node can reload it (`node.reload()`). */
  reloadable?: boolean;
  /** The span export's batching (see StartNodeOptions). */
  tracingBatch?: StartNodeOptions['tracingBatch'];
}

/** Config for one route `/` to a pool of the given origins, caching on. */
export function baseConfig(originUrls: string[]): Record<string, unknown> {
  return {
    listen: '127.0.0.1:0',
    admin: { listen: '127.0.0.1:0', token: 'test-admin-token-0123456789' },
    pools: [{ name: 'origin', upstreams: originUrls, connect_timeout: '1s', response_timeout: '2s' }],
    routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin' }],
  };
}

/**
 * `SVC_TEST_WORKERS` (set by test/run.ts for its one-thread pass) runs every node whose test does not
 * choose `workers` itself with that many data-plane threads; without it, nodes run with the default
 * (one per core), as an operator's do.
 */
function workersOverride(config: Record<string, unknown> | undefined): Record<string, unknown> {
  const forced = process.env.SVC_TEST_WORKERS;
  return forced === undefined || config?.workers !== undefined ? {} : { workers: Number(forced) };
}

/** `SVC_TEST_PROTOCOL=h2` (test-protocol.ts): the node terminates TLS, unless its test chooses `tls` itself. */
async function protocolOverride(config: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  const tls = config?.tls === undefined ? await testTlsConfig() : undefined;
  return tls === undefined ? {} : { tls };
}

export async function startSvc(originUrls: string[], options: SvcOptions = {}): Promise<SvcUnderTest> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'svc-test-')));
  const raw = { ...baseConfig(originUrls), ...workersOverride(options.config), ...(await protocolOverride(options.config)), ...options.config };
  const config = parseConfig(raw);
  const configFile = options.reloadable ? join(dir, 'svc.json') : undefined;
  if (configFile !== undefined) await writeFile(configFile, JSON.stringify(raw));
  const logs = new LogCapture();
  const clock = new ManualClock(options.frozenClock);
  const node = await startNode({
    config,
    logger: createLogger({ destination: logs }),
    env: options.env ?? {},
    clock: clock.shared,
    workerOutput: { write: (line) => void logs.write(line) },
    configFile,
    cdnTiming: options.cdnTiming,
    tracingBatch: options.tracingBatch,
  });
  checkAdminAnswers(node.adminUrl);
  return {
    node,
    dataUrl: node.dataUrl,
    adminUrl: node.adminUrl,
    logs,
    clock,
    dir,
    configFile,
    async stop() {
      await node.stop();
      stopCheckingAdminAnswers(node.adminUrl);
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
