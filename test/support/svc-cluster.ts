// Real svc clusters for tests: each node is its own `svc serve` process on 127.0.0.1, with its own
// ports, warm tier and config file, started, SIGKILLed and restarted as an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from './eventually.js';
import { fetchRaw } from './http.js';
import { checkAdminAnswers, stopCheckingAdminAnswers } from './openapi-conformance.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
export const CLUSTER_TOKEN = 'cluster-test-token-0123456789';
/** The test clusters' `cluster.secret` (32 bytes, base64). */
export const CLUSTER_SECRET = Buffer.from('svc-test-cluster-secret-32-bytes').toString('base64');

export interface ClusterNodeProcess {
  name: string;
  dataUrl: string;
  adminUrl: string;
  clusterAddress: string;
  /** Its warm tier's directory (`warm.path`), which holds its invalidation journals too. */
  warmPath: string;
  child: ChildProcess | undefined;
  stdout: string;
}

export interface SvcCluster {
  nodes: ClusterNodeProcess[];
  node(name: string): ClusterNodeProcess;
  /** SIGKILL: no leave, no flush, as a crash. */
  kill(name: string): Promise<void>;
  /** Starts a stopped node again with the same config, ports and warm tier. */
  restart(name: string): Promise<void>;
  /** As restart, but only waits for the process to answer /healthz, not to be ready. */
  relaunch(name: string): Promise<void>;
  /** Adds a node (e.g. in another mode) that joins the others. */
  add(name: string, mode: 'strong' | 'eventual'): Promise<ClusterNodeProcess>;
  close(): Promise<void>;
}

interface NodeSpec {
  process: ClusterNodeProcess;
  configPath: string;
}

/** A node's readiness conditions, its view of the members and its last output, for a failed start. */
async function describeState(node: ClusterNodeProcess): Promise<string> {
  const fetchText = async (path: string): Promise<string> => {
    try {
      return (await fetchRaw(`${node.adminUrl}${path}`)).body;
    } catch (error) {
      return `(${(error as Error).message})`;
    }
  };
  const output = node.stdout.split('\n').filter((line) => line !== '').slice(-15).join('\n    ');
  return [
    `--- ${node.name} (exit ${node.child?.exitCode ?? node.child?.signalCode ?? 'none'})`,
    `  readyz: ${await fetchText('/readyz?detail=1')}`,
    `  peers: ${await fetchText('/v1/cluster/peers')}`,
    `  output:\n    ${output}`,
  ].join('\n');
}

/**
 * How long a node is given to come up, or membership to converge (a join is a push-pull with every
 * seed, its gossip a few probe rounds): 20 s, what a 2-core machine running a second test suite needs.
 */
export const MEMBERSHIP_WAIT_MS = 20_000;
/** How the cluster's nodes are waited on: a node not listening yet is not up yet. */
const NODE_WAIT = { timeoutMs: MEMBERSHIP_WAIT_MS, everyMs: 100, tolerateErrors: true };

/** Waits until `path` on a node's admin listener answers 200; if it does not, says what the node logged. */
async function untilAnswers(node: ClusterNodeProcess, path: '/readyz' | '/healthz', what: string): Promise<void> {
  await eventually(what, async () => (await fetchRaw(`${node.adminUrl}${path}`)).status, (status) => status === 200, {
    ...NODE_WAIT,
    detail: () => `${node.name} said:\n${node.stdout.slice(-3000)}`,
  });
}

export interface SvcClusterOptions {
  names: string[];
  mode: 'strong' | 'eventual';
  originUrl: string;
  /** Further top-level YAML lines for every node's config (tracing…). */
  extraConfig?: string[];
  /** How cluster traffic is protected: the shared test secret (default), or `cluster.insecure: true`. */
  security?: 'secret' | 'insecure';
  /** More keys of each node's cluster block, as YAML flow-mapping entries (`peer_timeout: 300ms`). */
  clusterKeys?: string;
  /** As clusterKeys, for keys that differ by node (a libp2p key directory); in place of clusterKeys. */
  clusterKeysOf?: (name: string) => string;
}

export async function startSvcCluster(options: SvcClusterOptions): Promise<SvcCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cluster-'));
  const specs = new Map<string, NodeSpec>();
  const clusterAddresses: string[] = [];

  const describe = async (name: string): Promise<NodeSpec> => {
    const [data, admin, gossip] = [await freePort(), await freePort(), await freePort()];
    const clusterAddress = `127.0.0.1:${gossip}`;
    clusterAddresses.push(clusterAddress);
    checkAdminAnswers(`http://127.0.0.1:${admin}`);
    return {
      configPath: join(dir, `${name}.yaml`),
      process: { name, dataUrl: `http://127.0.0.1:${data}`, adminUrl: `http://127.0.0.1:${admin}`, clusterAddress, warmPath: join(dir, name, 'warm'), child: undefined, stdout: '' },
    };
  };

  const clusterKeys = (name: string): string => {
    const keys = options.clusterKeysOf?.(name) ?? options.clusterKeys;
    return keys ? `${keys}, ` : '';
  };
  const security = options.security === 'insecure' ? 'insecure: true, ' : `secret: "${CLUSTER_SECRET}", `;
  const writeConfig = async (spec: NodeSpec, mode: 'strong' | 'eventual'): Promise<void> => {
    const { process: node } = spec;
    await writeFile(
      spec.configPath,
      [
        `listen: ${new URL(node.dataUrl).host}`,
        `admin: { listen: "${new URL(node.adminUrl).host}" }`,
        'hop_limit: 2',
        // One process per node: a test about clusters does not double its processes (CI has 2 cores).
        'workers: 1',
        `warm: { path: ${JSON.stringify(node.warmPath)}, max_bytes: 50000000 }`,
        `pools: [{ name: origin, upstreams: ["${options.originUrl}"], connect_timeout: 1s, response_timeout: 5s }]`,
        'routes: [{ name: all, pool: origin }]',
        `cluster: { mode: ${mode}, node_name: ${node.name}, bind: "${node.clusterAddress}", ${security}${clusterKeys(node.name)}join: [${clusterAddresses.map((a) => `"${a}"`).join(', ')}] }`,
        ...(options.extraConfig ?? []),
      ].join('\n'),
    );
  };

  const launch = async (spec: NodeSpec): Promise<void> => {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', spec.configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SVC_ADMIN_TOKEN: CLUSTER_TOKEN },
    });
    spec.process.child = child;
    child.stdout!.on('data', (chunk: Buffer) => (spec.process.stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (spec.process.stdout += chunk.toString()));
  };

  const ready = (node: ClusterNodeProcess): Promise<void> => untilAnswers(node, '/readyz', `${node.name} ready`);

  for (const name of options.names) specs.set(name, await describe(name));
  for (const spec of specs.values()) await writeConfig(spec, options.mode);
  for (const spec of specs.values()) await launch(spec);
  const nodes = [...specs.values()].map((spec) => spec.process);
  const stopChild = async (node: ClusterNodeProcess, signal: NodeJS.Signals): Promise<void> => {
    const child = node.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  const close = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => stopChild(node, 'SIGTERM')));
    for (const node of nodes) stopCheckingAdminAnswers(node.adminUrl);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await startUp();
  } catch (error) {
    // A cluster that did not come up must not leave its processes behind: they would keep the test
    // process (and CI) waiting forever. What each node said and reported is kept in the error.
    const report = await Promise.all(nodes.map(describeState));
    await Promise.all(nodes.map((node) => stopChild(node, 'SIGKILL')));
    for (const node of nodes) stopCheckingAdminAnswers(node.adminUrl);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${report.join('\n')}`, { cause: error });
  }

  async function startUp(): Promise<void> {
    await Promise.all(nodes.map(ready));
    // Every node sees every other alive: membership has converged.
    await eventually(
      'membership to converge',
      () => Promise.all(nodes.map(async (node) => (JSON.parse((await fetchRaw(`${node.adminUrl}/v1/cluster/peers`)).body) as { state: string }[]).filter((p) => p.state === 'alive').length)),
      (alive) => alive.every((count) => count === nodes.length),
      NODE_WAIT,
    );
  }

  const spec = (name: string): NodeSpec => {
    const found = specs.get(name);
    if (!found) throw new Error(`no node ${name}`);
    return found;
  };
  return {
    nodes,
    node: (name) => spec(name).process,
    kill: (name) => stopChild(spec(name).process, 'SIGKILL'),
    async restart(name) {
      await launch(spec(name));
      await ready(spec(name).process);
    },
    async relaunch(name) {
      await launch(spec(name));
      await untilAnswers(spec(name).process, '/healthz', `${name} up`);
    },
    async add(name, mode) {
      const added = await describe(name);
      specs.set(name, added);
      await writeConfig(added, mode);
      await launch(added);
      nodes.push(added.process);
      await untilAnswers(added.process, '/healthz', `${name} up`);
      return added.process;
    },
    close,
  };
}

/** An admin API call with the test clusters' token: its status and JSON answer. */
export async function clusterAdmin(node: ClusterNodeProcess, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const answer = await fetchRaw(`${node.adminUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: answer.status, json: JSON.parse(answer.body) as Record<string, unknown> };
}

/** `count` paths `/<prefix>-<i>` of `site` whose key `owner` owns, as node `asker` sees the ring. */
export async function pathsOwnedBy(asker: ClusterNodeProcess, owner: string, prefix: string, count = 1, site = 'shop.example'): Promise<string[]> {
  const paths: string[] = [];
  for (let i = 0; paths.length < count && i < 1_000; i++) {
    const path = `/${prefix}-${i}`;
    const stats = await clusterAdmin(asker, `/v1/stats?url=${encodeURIComponent(`http://${site}${path}`)}`);
    if ((stats.json.ring as { owner: string }).owner === owner) paths.push(path);
  }
  if (paths.length < count) throw new Error(`only ${paths.length} of ${count} paths owned by ${owner}`);
  return paths;
}
