// A network namespace of one test's own, with a loopback interface only, for processes that need
// kernel settings the host may not have: a namespace has its own `net.*` sysctls, set here without
// touching the host's. The test process stays in the host's namespace: a relay inside it
// (netns-relay.ts) and forwarders here join the two over unix sockets (socket-forwarder.ts), so each
// port `exposed` inside answers the test on a loopback port of the host, and each port `reached`
// inside is a TCP address of the host (the test's origin). Needs root and `ip` (netns.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../../bench/support/free-port.js';
import { inNamespace, ip, readyLine } from './netns.js';
import type { RelayForward } from './netns-relay.js';
import { forwardConnections } from './socket-forwarder.js';

const RELAY = fileURLToPath(new URL('./netns-relay.js', import.meta.url));
const RELAY_TIMEOUT_MS = 30_000;
const execFileAsync = promisify(execFile);

export interface LoopbackNamespaceOptions {
  /** A directory of the test's own, for the unix sockets. */
  dir: string;
  /** Set inside the namespace, e.g. `{ 'net.ipv4.tcp_migrate_req': '1' }`. */
  sysctls: Record<string, string>;
  /** Ports of 127.0.0.1 inside that the test reaches (`urlOf`). */
  exposed: readonly number[];
  /** Ports of 127.0.0.1 inside that reach a port of 127.0.0.1 on the host. */
  reached: readonly { port: number; hostPort: number }[];
}

export interface LoopbackNamespace {
  readonly name: string;
  /** The command and arguments that run `command` inside (`ip netns exec` execs it: the pid is its own). */
  exec(command: string, args: readonly string[]): { command: string; args: string[] };
  /** `http://127.0.0.1:<host port>`, where the namespace's 127.0.0.1:`port` answers the test. */
  urlOf(port: number): string;
  /** A sysctl's value as the namespace has it. */
  sysctl(name: string): Promise<string>;
  /** Stops the relay and the forwarders, and deletes the namespace. */
  close(): Promise<void>;
}

export async function openLoopbackNamespace(options: LoopbackNamespaceOptions): Promise<LoopbackNamespace> {
  const name = `svc-lo-${process.pid}`;
  const undo: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    for (const step of undo.splice(0).reverse()) await step().catch(() => undefined);
  };
  const exec = (command: string, args: readonly string[]): { command: string; args: string[] } => inNamespace(name, command, args);
  const sysctl = async (key: string): Promise<string> => {
    const run = exec('sysctl', ['-n', key]);
    return (await execFileAsync(run.command, run.args, { timeout: 10_000 })).stdout.trim();
  };
  try {
    await ip('netns', 'add', name);
    undo.push(() => ip('netns', 'del', name));
    await ip('-n', name, 'link', 'set', 'lo', 'up');
    for (const [key, value] of Object.entries(options.sysctls)) {
      const run = exec('sysctl', ['-w', `${key}=${value}`]);
      await execFileAsync(run.command, run.args, { timeout: 10_000 });
    }
    const forwards: RelayForward[] = [];
    const urls = new Map<number, string>();
    for (const { port, hostPort } of options.reached) {
      const socket = join(options.dir, `reached-${port}.sock`);
      const forwarder = await forwardConnections({ path: socket }, { host: '127.0.0.1', port: hostPort });
      undo.push(() => forwarder.close());
      forwards.push({ from: { host: '127.0.0.1', port }, to: { path: socket } });
    }
    for (const port of options.exposed) {
      const socket = join(options.dir, `exposed-${port}.sock`);
      forwards.push({ from: { path: socket }, to: { host: '127.0.0.1', port } });
      const local = await freePort();
      const forwarder = await forwardConnections({ host: '127.0.0.1', port: local }, { path: socket });
      undo.push(() => forwarder.close());
      urls.set(port, `http://127.0.0.1:${local}`);
    }
    const relayCommand = exec(process.execPath, [RELAY, JSON.stringify(forwards)]);
    const relay = spawn(relayCommand.command, relayCommand.args, { stdio: ['pipe', 'pipe', 'inherit'] });
    undo.push(() => endRelay(relay));
    await readyLine(relay, `the relay in namespace ${name}`, RELAY_TIMEOUT_MS);
    return {
      name,
      exec,
      urlOf: (port) => {
        const url = urls.get(port);
        if (url === undefined) throw new Error(`port ${port} is not exposed`);
        return url;
      },
      sysctl,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The relay exits once its stdin ends; SIGKILL when it has not after a while. */
async function endRelay(relay: ChildProcess): Promise<void> {
  if (relay.exitCode !== null || relay.signalCode !== null) return;
  const exited = once(relay, 'exit');
  relay.stdin!.end();
  const kill = setTimeout(() => relay.kill('SIGKILL'), RELAY_TIMEOUT_MS);
  await exited;
  clearTimeout(kill);
}
