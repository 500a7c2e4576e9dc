// The node the soak runs: `svc serve` as an operator starts it (the real CLI, in a process of its
// own, the defaults but for a small warm tier), with the soak's preload (soak-thread-kill.ts) and an
// IPC channel to it, and its standard output read line by line for the events the soak counts.
// Reloads alternate SIGHUP and `POST /v1/reload`, each after the file changed (the pool's
// connect_timeout flips between 2s and 3s, so every reload replaces the pool under load).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { SoakKillReport } from './soak-thread-kill.js';

const SVC_CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const KILL_PRELOAD = new URL('./soak-thread-kill.js', import.meta.url).href;
export const SOAK_ADMIN_TOKEN = 'soak-admin-token-0123456789abcdef';
const START_TIMEOUT_MS = 60_000;

export interface SoakNodeOptions {
  originUrl: string;
  warmMaxBytes: number;
  /** `hot_max_bytes`; absent: svc's default. */
  hotMaxBytes?: number | undefined;
  /** Node's own flags for the node's process (V8's heap sizes…); none by default. */
  nodeFlags?: readonly string[] | undefined;
}

/** A JSON log line of the node. */
export type LogLine = Record<string, unknown> & { level: string; msg: string };

const WARNING_LEVELS = new Set(['warn', 'error', 'fatal']);

export interface ReloadOutcome {
  via: 'SIGHUP' | 'POST /v1/reload';
  atMs: number;
  ok: boolean;
  detail: string;
}

export class SoakNode {
  readonly pid: number;
  /** Lines at warn and above, by message. */
  readonly warnings = new Map<string, number>();
  /** When each thread exit was logged, by thread id (the supervisor's 'data-plane worker exited'). */
  readonly threadExits = new Map<number, number>();
  /** Lines of standard error, the last 50. */
  readonly stderrTail: string[] = [];
  #reloads = 0;
  #reloadedLines = 0;
  readonly #killReports: ((report: SoakKillReport) => void)[] = [];

  private constructor(
    readonly child: ChildProcess,
    readonly dataUrl: string,
    readonly adminUrl: string,
    readonly workers: number,
    private readonly dir: string,
    private readonly options: SoakNodeOptions,
    lines: AsyncIterableIterator<string>,
  ) {
    this.pid = child.pid!;
    child.on('message', (report: SoakKillReport) => this.#killReports.shift()?.(report));
    void this.#readLog(lines);
  }

  static async start(options: SoakNodeOptions): Promise<SoakNode> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-soak-'));
    await writeFile(join(dir, 'svc.yaml'), configText(dir, options, 0));
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', KILL_PRELOAD, SVC_CLI, 'serve', '--config', join(dir, 'svc.yaml')], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // svc's threads put their sockets in the temporary directory: the soak's own, removed after.
      env: { ...process.env, TMPDIR: dir },
    });
    const stderrTail: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 50) stderrTail.shift();
    });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const deadline = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    try {
      for (;;) {
        const next = await lines.next();
        if (next.done) throw new Error(`svc serve exited before it served: ${stderrTail.join('\n')}`);
        const line = parseLine(next.value);
        if (line?.msg !== 'svc is serving') continue;
        const node = new SoakNode(child, String(line.data), String(line.admin), Number(line.workers), dir, options, lines);
        node.stderrTail.push(...stderrTail);
        return node;
      }
    } catch (error) {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw error;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** Reloads the configuration after flipping the pool's connect_timeout: by SIGHUP and by the API in turn. */
  async reload(): Promise<ReloadOutcome> {
    const n = ++this.#reloads;
    await writeFile(join(this.dir, 'svc.yaml'), configText(this.dir, this.options, n));
    const atMs = Date.now();
    if (n % 2 === 1) {
      const before = this.#reloadedLines;
      this.child.kill('SIGHUP');
      // The node logs the outcome of a SIGHUP; the soak waits for it so reloads never overlap.
      const deadline = Date.now() + 10_000;
      while (this.#reloadedLines === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const ok = this.#reloadedLines > before;
      return { via: 'SIGHUP', atMs, ok, detail: ok ? 'configuration reloaded' : 'no "configuration reloaded" line within 10 s' };
    }
    const response = await request(`${this.adminUrl}/v1/reload`, { method: 'POST', headers: { authorization: `Bearer ${SOAK_ADMIN_TOKEN}` } });
    const body = await response.body.text();
    return { via: 'POST /v1/reload', atMs, ok: response.statusCode === 200 && body.includes('pools'), detail: `${response.statusCode} ${body}` };
  }

  /** Asks the preload to crash the data-plane thread that has served longest; its report. */
  async kill(): Promise<SoakKillReport> {
    const report = new Promise<SoakKillReport>((resolve) => this.#killReports.push(resolve));
    this.child.send({ kind: 'kill' });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the soak's preload did not answer a kill within 10 s")), 10_000).unref());
    return Promise.race([report, timeout]);
  }

  /** Whether the process has exited (on its own, while the soak still runs: a crash). */
  get exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.child.exitCode === null && this.child.signalCode === null ? undefined : { code: this.child.exitCode, signal: this.child.signalCode };
  }

  /** SIGTERM, as an operator stops it; SIGKILL if it has not exited in 15 s. How it ended. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.exited === undefined) {
      const exit = once(this.child, 'exit');
      if (this.child.connected) this.child.disconnect();
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(killer);
    }
    await rm(this.dir, { recursive: true, force: true });
    return this.exited!;
  }

  async #readLog(lines: AsyncIterableIterator<string>): Promise<void> {
    for await (const text of lines) {
      const line = parseLine(text);
      if (line === undefined) continue;
      if (line.msg === 'configuration reloaded') this.#reloadedLines++;
      if (line.msg === 'data-plane worker exited: starting it again') this.threadExits.set(Number(line.thread), Date.now());
      if (WARNING_LEVELS.has(line.level)) this.warnings.set(line.msg, (this.warnings.get(line.msg) ?? 0) + 1);
    }
  }
}

function parseLine(text: string): LogLine | undefined {
  try {
    const line = JSON.parse(text) as LogLine;
    return typeof line.msg === 'string' && typeof line.level === 'string' ? line : undefined;
  } catch {
    return undefined;
  }
}

/** The configuration: svc's defaults but for the warm tier's bound (and `hot_max_bytes` when given). */
function configText(dir: string, options: SoakNodeOptions, reloads: number): string {
  return [
    'listen: 127.0.0.1:0',
    `admin: { listen: "127.0.0.1:0", token: ${SOAK_ADMIN_TOKEN} }`,
    `warm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: ${options.warmMaxBytes} }`,
    ...(options.hotMaxBytes === undefined ? [] : [`hot_max_bytes: ${options.hotMaxBytes}`]),
    `pools: [{ name: origin, upstreams: ["${options.originUrl}"], connect_timeout: ${reloads % 2 === 0 ? '2s' : '3s'} }]`,
    'routes: [{ name: all, pool: origin }]',
    '',
  ].join('\n');
}
