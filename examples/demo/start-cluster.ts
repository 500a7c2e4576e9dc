// `node dist/examples/demo/start-cluster.js strong|eventual`: the demo origin and a three-node svc
// cluster on one machine (examples/cluster-<mode>/{a,b,c}.yaml), each node its own `svc serve` process,
// until Ctrl-C or SIGTERM. The walk-through is docs/cluster-walkthrough.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFile, type Config } from '../../src/config/index.js';
import { startDemoOrigin, type DemoOrigin } from './demo-origin.js';

const MODES = ['strong', 'eventual'] as const;
type Mode = (typeof MODES)[number];
const NODE_NAMES = ['a', 'b', 'c'] as const;

// Membership converges in a few SWIM probe rounds; 30 s leaves room for a slow machine.
const CONVERGE_TIMEOUT_MS = 30_000;
// svc stops in about 2 s (its data-plane grace); a node still running after this is killed.
const STOP_TIMEOUT_MS = 15_000;

// Compiled to dist/examples/demo/, so the package root is three levels up.
const packageRoot = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(packageRoot, 'dist', 'src', 'cli', 'main.js');

let stopping = false;
/** Set once the cluster has converged: from then on, a node that exits is news, not a startup failure. */
let clusterUp = false;

interface ClusterNode {
  name: string;
  dataUrl: string;
  adminUrl: string;
  clusterAddress: string;
  /** Under the directory the script is started from, like the nodes' warm tiers. */
  dir: string;
  child: ChildProcess;
  exited: Promise<void>;
}

function parseMode(args: readonly string[]): Mode {
  const mode = MODES.find((m) => m === args[0]);
  if (args.length !== 1 || mode === undefined) {
    console.error(`usage: node dist/examples/demo/start-cluster.js strong|eventual (got: ${args.join(' ') || 'nothing'})`);
    process.exit(2);
  }
  return mode;
}

function launch(mode: Mode, name: string, config: Config, configPath: string, token: string): ClusterNode {
  const dir = join('.svc-data', `${mode}-${name}`);
  mkdirSync(dir, { recursive: true });
  // The node writes its JSON log straight to the file: this terminal stays free for the banner.
  const log = openSync(join(dir, 'svc.log'), 'w');
  const child = spawn(process.execPath, [cli, 'serve', '--config', configPath], {
    stdio: ['ignore', log, log],
    env: { ...process.env, SVC_ADMIN_TOKEN: token },
  });
  closeSync(log);
  writeFileSync(join(dir, 'svc.pid'), `${child.pid}\n`);
  const exited = once(child, 'exit').then(([code, signal]: unknown[]) => {
    rmSync(join(dir, 'svc.pid'), { force: true });
    if (clusterUp && !stopping) console.error(`node ${name} exited (${signal ?? `code ${String(code)}`}); the others keep running`);
  });
  return {
    name,
    dataUrl: `http://${config.listen}`,
    adminUrl: `http://${config.admin.listen}`,
    clusterAddress: config.cluster?.bind ?? '',
    dir,
    child,
    exited,
  };
}

function running(node: ClusterNode): boolean {
  return node.child.exitCode === null && node.child.signalCode === null;
}

async function alivePeers(node: ClusterNode): Promise<number> {
  // Bounded: something else holding the admin port may accept and never answer.
  const answer = await fetch(`${node.adminUrl}/v1/cluster/peers`, { signal: AbortSignal.timeout(1_000) });
  if (!answer.ok) return 0;
  const peers = (await answer.json()) as { state: string }[];
  return peers.filter((peer) => peer.state === 'alive').length;
}

/**
 * Resolves once every node lists every node alive, or once a signal is stopping everything; throws if
 * a node exits first or time runs out.
 */
async function converge(nodes: readonly ClusterNode[]): Promise<void> {
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  for (;;) {
    const counts = await Promise.all(nodes.map((node) => alivePeers(node).catch(() => 0)));
    if (stopping) return;
    const dead = nodes.find((node) => !running(node));
    if (dead) throw new Error(`node ${dead.name} exited during startup; its log:\n${tail(join(dead.dir, 'svc.log'))}`);
    if (counts.every((count) => count === nodes.length)) return;
    if (Date.now() > deadline) {
      const seen = nodes.map((node, i) => `${node.name} sees ${counts[i]} alive`).join(', ');
      throw new Error(`the cluster did not converge in ${CONVERGE_TIMEOUT_MS / 1000} s (${seen}); logs in .svc-data/`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function tail(path: string): string {
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  return lines.slice(-10).join('\n');
}

function banner(mode: Mode, origin: DemoOrigin, nodes: readonly ClusterNode[], token: string, tokenSource: string): string {
  const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
  const rows = nodes.map((n) =>
    [`    ${n.name}`.padEnd(10), n.dataUrl.padEnd(24), n.adminUrl.padEnd(24), n.clusterAddress.padEnd(17), String(n.child.pid).padEnd(8), join(n.dir, 'svc.log')].join(''),
  );
  const strongTry =
    mode === 'strong'
      ? `    curl -s -H "Authorization: Bearer $SVC_ADMIN_TOKEN" '${a.adminUrl}/v1/stats?url=http://demo.example/products/1'   # ring.owner owns it\n`
      : '';
  return `
  A three-node svc cluster in ${mode} mode, in front of the demo origin (${origin.url}).

    node  data plane              admin API               cluster          pid     log
${rows.join('\n')}

    admin token  ${token}   (${tokenSource})

  Try (the same Host on every node, so that every node computes the same cache key):
    curl -si -H 'Host: demo.example' ${a.dataUrl.slice('http://'.length)}/products/1 | grep -i ^x-cache
    curl -si -H 'Host: demo.example' ${b.dataUrl.slice('http://'.length)}/products/1 | grep -i ^x-cache
    export SVC_ADMIN_TOKEN=${token}
${strongTry}    npx svc cluster peers --server ${a.adminUrl.slice('http://'.length)}
    npx svc purge http://demo.example/products/1 --server ${c.adminUrl.slice('http://'.length)}

  Ctrl-C stops everything. Walk-through: docs/cluster-walkthrough.md
`;
}

async function stopAll(nodes: readonly ClusterNode[], origin: DemoOrigin): Promise<boolean> {
  stopping = true;
  // svc handles SIGINT and SIGTERM once each: a Ctrl-C reaches the nodes from the terminal as SIGINT,
  // and this SIGTERM on top of it is handled, not fatal.
  const signalled = nodes.filter(running);
  for (const node of signalled) node.child.kill('SIGTERM');
  const killer = setTimeout(() => signalled.filter(running).forEach((node) => node.child.kill('SIGKILL')), STOP_TIMEOUT_MS);
  await Promise.all(nodes.map((node) => node.exited));
  clearTimeout(killer);
  await origin.close();
  return signalled.every((node) => node.child.exitCode === 0);
}

const mode = parseMode(process.argv.slice(2));
const fromEnv = process.env.SVC_ADMIN_TOKEN;
const token = fromEnv !== undefined && fromEnv !== '' ? fromEnv : randomBytes(24).toString('base64url');
const tokenSource = fromEnv !== undefined && fromEnv !== '' ? 'from SVC_ADMIN_TOKEN' : 'generated for this run and given to the nodes as SVC_ADMIN_TOKEN';

const configs = await Promise.all(
  NODE_NAMES.map(async (name) => {
    const path = join(packageRoot, 'examples', `cluster-${mode}`, `${name}.yaml`);
    return { name, path, config: await loadConfigFile(path) };
  }),
);
let origin: DemoOrigin;
try {
  origin = await startDemoOrigin('127.0.0.1', 8081);
} catch (error) {
  console.error(`cannot start the demo origin on 127.0.0.1:8081: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const nodes = configs.map(({ name, path, config }) => launch(mode, name, config, path, token));
const stopOnSignal = (): void => {
  if (stopping) return;
  void stopAll(nodes, origin).then((clean) => process.exit(clean ? 0 : 1));
};
process.on('SIGINT', stopOnSignal);
process.on('SIGTERM', stopOnSignal);

try {
  await converge(nodes);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  if (!stopping) await stopAll(nodes, origin);
  process.exit(1);
}
if (!stopping) {
  clusterUp = true;
  console.log(banner(mode, origin, nodes, token, tokenSource));
}
