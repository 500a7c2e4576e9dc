// A cluster of real `svc serve` processes on 127.0.0.1 for benchmarks: each node with its own data,
// admin and cluster ports and config file, started together and stopped together. Adapted from the
// tests' cluster support (bench/ does not import test/), without the kill and restart a test needs.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, startProcess, type Started } from './processes.js';

export { freePort };

const SVC_CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** The benchmark clusters' `cluster.secret` (32 bytes, base64). */
const BENCH_CLUSTER_SECRET = Buffer.from('svc-bench-cluster-secret-32bytes').toString('base64');
export const BENCH_ADMIN_TOKEN = 'bench-cluster-token-0123456789';

/** Startup and membership convergence of a handful of local nodes take a few seconds; 30 s means broken. */
const CONVERGE_TIMEOUT_MS = 30_000;

export interface BenchNode {
  name: string;
  /** `http://127.0.0.1:<port>` of the data plane. */
  dataUrl: string;
  /** `http://127.0.0.1:<port>` of the admin listener. */
  adminUrl: string;
  clusterAddress: string;
  process: Started;
}

export interface BenchCluster {
  nodes: BenchNode[];
  /** SIGKILL: no leave, no flush, as a crash. */
  kill(name: string): Promise<void>;
  /** Starts a killed node again with its config and warm tier; resolves once it answers /healthz. */
  relaunch(name: string): Promise<void>;
  /** Stops every node (SIGTERM, SIGKILL after 5 s) and removes the config directory. */
  stop(): Promise<void>;
}

export interface BenchClusterOptions {
  names: string[];
  mode: 'strong' | 'eventual';
  originUrl: string;
  /** Required by strong mode; one hop reaches the owner, two leave room for a ring change in flight. */
  hopLimit: number;
  /** Give each node a warm tier (and so a journal and invalidation log on disk). */
  warm?: boolean;
  /** Further top-level YAML lines for every node (max_object_bytes, hot_max_bytes…). */
  extra?: string[];
}

async function getJson(url: string): Promise<unknown> {
  const response = await request(url);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
  return JSON.parse(text) as unknown;
}

async function waitUntil(check: () => Promise<boolean>, nodes: BenchNode[], what: string): Promise<void> {
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  for (;;) {
    const exited = nodes.find((node) => node.process.child.exitCode !== null);
    if (exited) throw new Error(`${exited.name} exited with code ${exited.process.child.exitCode} while waiting for ${what}`);
    try {
      if (await check()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${CONVERGE_TIMEOUT_MS} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts the nodes (hot tier only: the warm tier's disk writes would only add noise here), waits until
 * each is ready and lists every node alive in `GET /v1/cluster/peers`. Stops whatever it started if
 * that fails.
 */
export async function startBenchCluster(options: BenchClusterOptions): Promise<BenchCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-cluster-'));
  const described: Omit<BenchNode, 'process'>[] = [];
  for (const name of options.names) {
    const [data, admin, gossip] = [await freePort(), await freePort(), await freePort()];
    described.push({ name, dataUrl: `http://127.0.0.1:${data}`, adminUrl: `http://127.0.0.1:${admin}`, clusterAddress: `127.0.0.1:${gossip}` });
  }
  const seeds = described.map((node) => `"${node.clusterAddress}"`).join(', ');
  const nodes: BenchNode[] = [];
  const configPaths = new Map<string, string>();
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.process.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const node of described) {
      const configPath = join(dir, `${node.name}.yaml`);
      await writeFile(
        configPath,
        [
          `listen: ${new URL(node.dataUrl).host}`,
          `admin: { listen: "${new URL(node.adminUrl).host}", token: ${BENCH_ADMIN_TOKEN} }`,
          `hop_limit: ${options.hopLimit}`,
          // One process per node (eventual mode would fork one per core): the cluster figures are per node.
          'workers: 1',
          ...(options.extra ?? []),
          `pools: [{ name: origin, upstreams: ["${options.originUrl}"], connect_timeout: 1s, response_timeout: 5s }]`,
          'routes: [{ name: all, pool: origin }]',
          ...(options.warm ? [`warm: { path: ${JSON.stringify(join(dir, node.name, 'warm'))}, max_bytes: 100000000 }`] : []),
          `cluster: { mode: ${options.mode}, node_name: ${node.name}, bind: "${node.clusterAddress}", secret: "${BENCH_CLUSTER_SECRET}", join: [${seeds}] }`,
        ].join('\n'),
      );
      configPaths.set(node.name, configPath);
      nodes.push({ ...node, process: startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPath]) });
    }
    await waitUntil(
      async () => {
        for (const node of nodes) {
          const ready = await request(`${node.adminUrl}/readyz`);
          await ready.body.dump();
          if (ready.statusCode !== 200) return false;
        }
        return true;
      },
      nodes,
      'every node to be ready',
    );
    await waitUntil(
      async () => {
        for (const node of nodes) {
          const peers = (await getJson(`${node.adminUrl}/v1/cluster/peers`)) as { state: string }[];
          if (peers.filter((peer) => peer.state === 'alive').length !== nodes.length) return false;
        }
        return true;
      },
      nodes,
      `every node to list ${nodes.length} alive peers`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const named = (name: string): BenchNode => {
    const node = nodes.find((candidate) => candidate.name === name);
    if (node === undefined) throw new Error(`no node ${name}`);
    return node;
  };
  return {
    nodes,
    stop,
    async kill(name) {
      const { child } = named(name).process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
    async relaunch(name) {
      const node = named(name);
      node.process = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPaths.get(name)!]);
      await waitUntil(
        async () => {
          const health = await request(`${node.adminUrl}/healthz`);
          await health.body.dump();
          return health.statusCode === 200;
        },
        [node],
        `${name} to answer /healthz`,
      );
    },
  };
}
