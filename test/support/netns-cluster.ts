// A real svc cluster on a network the test can partition (partition-network.ts): each node is its own
// `svc serve` process in its own namespace, on the defaults an operator runs (a data-plane thread per
// core, the default lease and timeouts), with a warm tier and `cluster.secret`. The nodes bind their
// cluster transport on the cluster network and serve clients on the edge network.
//
// The test process stays in the host's namespace, where it cannot reach those addresses: a relay in the
// hub namespace (netns-relay.ts) and forwarders in the test join them over unix sockets, so each node's
// data plane and admin API answer on a loopback port (`dataUrl`, `adminUrl`, usable with every helper of
// svc-cluster.ts), and the test's origin on 127.0.0.1 answers the nodes at the hub's edge address.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';
import { freePort } from '../../bench/support/free-port.js';
import { fetchRaw } from './http.js';
import { inNamespace, readyLine } from './netns.js';
import type { RelayForward } from './netns-relay.js';
import { checkAdminAnswers, stopCheckingAdminAnswers } from './openapi-conformance.js';
import { createPartitionNetwork, type NetworkNode, type PartitionNetwork } from './partition-network.js';
import { forwardConnections } from './socket-forwarder.js';
import { CLUSTER_SECRET, CLUSTER_TOKEN, type ClusterNodeProcess } from './svc-cluster.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const RELAY = fileURLToPath(new URL('./netns-relay.js', import.meta.url));
/** Every node has its namespace to itself, so each listens on the defaults' ports. */
const DATA_PORT = 8080;
const ADMIN_PORT = 9000;
const CLUSTER_PORT = 7946;
const ORIGIN_PORT = 8080;
/** How long a process is given to exit on SIGTERM (svc drains) before it is killed. */
const EXIT_GRACE_MS = 10_000;
const START_TIMEOUT_MS = 30_000;

export interface NetnsCluster {
  nodes: ClusterNodeProcess[];
  node(name: string): ClusterNodeProcess;
  network: PartitionNetwork;
  /** Stops every process it started and removes the namespaces and files, even after a failed start. */
  close(): Promise<void>;
}

export interface NetnsClusterOptions {
  names: string[];
  mode: 'strong' | 'eventual';
  /** The test origin's port on 127.0.0.1. */
  originPort: number;
}

/** Sends `signal`, and SIGKILL if the process has not exited within EXIT_GRACE_MS. */
async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const kill = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
  await exited;
  clearTimeout(kill);
}

/** The node's config: the defaults, but for its addresses, the origin, its warm tier and the cluster. */
function configOf(node: NetworkNode, all: readonly NetworkNode[], mode: string, originUrl: string, warmPath: string): string {
  const forcedWorkers = process.env.SVC_TEST_WORKERS;
  return [
    `listen: "${node.edgeAddress}:${DATA_PORT}"`,
    `admin: { listen: "${node.edgeAddress}:${ADMIN_PORT}" }`,
    'hop_limit: 2',
    // test/run.ts's one-thread pass; otherwise a data-plane thread per core, as an operator runs it.
    ...(forcedWorkers === undefined ? [] : [`workers: ${Number(forcedWorkers)}`]),
    `warm: { path: ${JSON.stringify(warmPath)}, max_bytes: 50000000 }`,
    `pools: [{ name: origin, upstreams: ["${originUrl}"], connect_timeout: 1s, response_timeout: 5s }]`,
    'routes: [{ name: all, pool: origin }]',
    `cluster: { mode: ${mode}, node_name: ${node.name}, bind: "${node.clusterAddress}:${CLUSTER_PORT}", secret: "${CLUSTER_SECRET}", ` +
      `join: [${all.map((peer) => `"${peer.clusterAddress}:${CLUSTER_PORT}"`).join(', ')}] }`,
  ].join('\n');
}

export async function startNetnsCluster(options: NetnsClusterOptions): Promise<NetnsCluster> {
  const undo: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    const failures: string[] = [];
    for (const step of undo.splice(0).reverse()) await step().catch((error: Error) => failures.push(error.message));
    if (failures.length > 0) throw new Error(`cleaning up the cluster: ${failures.join('\n')}`);
  };
  const nodes: ClusterNodeProcess[] = [];
  try {
    const dir = await mkdtemp(join(tmpdir(), 'svc-netns-'));
    undo.push(() => rm(dir, { recursive: true, force: true }));
    const network = await createPartitionNetwork(options.names);
    undo.push(() => network.destroy());

    const originSocket = join(dir, 'origin.sock');
    const origin = await forwardConnections({ path: originSocket }, { host: '127.0.0.1', port: options.originPort });
    undo.push(() => origin.close());
    const relayForwards: RelayForward[] = [{ from: { host: network.hubAddress, port: ORIGIN_PORT }, to: { path: originSocket } }];
    for (const node of network.nodes) {
      const urls: Record<'data' | 'admin', string> = { data: '', admin: '' };
      for (const [listener, port] of [['data', DATA_PORT], ['admin', ADMIN_PORT]] as const) {
        const socket = join(dir, `${node.name}-${listener}.sock`);
        relayForwards.push({ from: { path: socket }, to: { host: node.edgeAddress, port } });
        const local = await freePort();
        const forwarder = await forwardConnections({ host: '127.0.0.1', port: local }, { path: socket });
        undo.push(() => forwarder.close());
        urls[listener] = `http://127.0.0.1:${local}`;
      }
      checkAdminAnswers(urls.admin);
      undo.push(async () => stopCheckingAdminAnswers(urls.admin));
      nodes.push({
        name: node.name,
        dataUrl: urls.data,
        adminUrl: urls.admin,
        clusterAddress: `${node.clusterAddress}:${CLUSTER_PORT}`,
        warmPath: join(dir, node.name, 'warm'),
        child: undefined,
        stdout: '',
      });
    }

    const relayCommand = inNamespace(network.hub, process.execPath, [RELAY, JSON.stringify(relayForwards)]);
    const relay = spawn(relayCommand.command, relayCommand.args, { stdio: ['pipe', 'pipe', 'inherit'] });
    undo.push(() => stopProcess(relay, 'SIGTERM'));
    await readyLine(relay, `the relay in ${network.hub}`, START_TIMEOUT_MS);

    const originUrl = `http://${network.hubAddress}:${ORIGIN_PORT}`;
    const children: ChildProcess[] = [];
    undo.push(async () => {
      await Promise.all(children.map((child) => stopProcess(child, 'SIGTERM')));
    });
    for (const [index, node] of network.nodes.entries()) {
      const nodeProcess = nodes[index]!;
      const configPath = join(dir, `${node.name}.yaml`);
      await writeFile(configPath, configOf(node, network.nodes, options.mode, originUrl, nodeProcess.warmPath));
      const command = inNamespace(node.namespace, process.execPath, [CLI, 'serve', '--config', configPath]);
      // `ip netns exec` execs the command: the child's pid is the node's own.
      const child = spawn(command.command, command.args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: CLUSTER_TOKEN } });
      children.push(child);
      nodeProcess.child = child;
      for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (nodeProcess.stdout += chunk.toString()));
    }
    await waitUntilConverged(nodes);
    return { nodes, node: (name) => found(nodes, name), network, close };
  } catch (error) {
    const report = nodes.map((node) => `--- ${node.name}\n${node.stdout.split('\n').slice(-15).join('\n')}`).join('\n');
    await close().catch(() => undefined);
    throw new Error(`${(error as Error).message}\n${report}`, { cause: error });
  }
}

function found(nodes: readonly ClusterNodeProcess[], name: string): ClusterNodeProcess {
  const node = nodes.find((candidate) => candidate.name === name);
  if (!node) throw new Error(`no node ${name}`);
  return node;
}

/** Every node is ready and sees every other alive. */
async function waitUntilConverged(nodes: readonly ClusterNodeProcess[]): Promise<void> {
  const aliveSeen = async (node: ClusterNodeProcess): Promise<number> => {
    const exit = node.child?.exitCode ?? node.child?.signalCode;
    if (exit !== null && exit !== undefined) throw new Error(`${node.name} exited (${exit}) before the cluster converged`);
    try {
      if ((await fetchRaw(`${node.adminUrl}/readyz`)).status !== 200) return 0;
      const peers = JSON.parse((await fetchRaw(`${node.adminUrl}/v1/cluster/peers`)).body) as { state: string }[];
      return peers.filter((peer) => peer.state === 'alive').length;
    } catch {
      return 0;
    }
  };
  await eventually(
    'every node ready, seeing every other alive',
    () => Promise.all(nodes.map(aliveSeen)),
    (seen) => seen.every((count) => count === nodes.length),
    { timeoutMs: START_TIMEOUT_MS, everyMs: 200 },
  );
}
