// Two `svc serve` nodes in an eventual-mode cluster, each with two data-plane workers: the cluster
// has one member per node (the primary's), not one per worker, and a purge sent to one node reaches
// both workers of the other. Real processes, real gossip over UDP on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestOrigin } from '../../support/test-origin.js';
import { freePort } from '../../support/free-port.js';
import { fetchRaw, rawHttpGet } from '../../support/http.js';
import { CLUSTER_SECRET } from '../../support/svc-cluster.js';

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const TOKEN = 'cluster-workers-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface Node {
  dataUrl: string;
  adminUrl: string;
  child: ChildProcess;
  output: string;
}

interface Stats {
  tiers: { hot: { entries: number } };
  ring: { members: number } | null;
}

async function stats(node: Node): Promise<Stats> {
  return JSON.parse((await fetchRaw(`${node.adminUrl}/v1/stats`, { headers: AUTH })).body) as Stats;
}

async function until(what: string, check: () => Promise<boolean>, nodes: Node[]): Promise<void> {
  for (let i = 0; !(await check().catch(() => false)); i++) {
    if (i === 300) throw new Error(`${what} did not happen:\n${nodes.map((node) => node.output).join('\n')}`);
    await sleep(100);
  }
}

test('an eventual cluster of two nodes with two workers each: one member per node, and a purge reaches every worker of the other node', async () => {
  let fetches = 0;
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
  const dir = await mkdtemp(join(tmpdir(), 'svc-cluster-workers-'));
  const nodes: Node[] = [];
  try {
    const gossip = [await freePort(), await freePort()];
    for (const [i, name] of ['a', 'b'].entries()) {
      const [dataPort, adminPort] = [await freePort(), await freePort()];
      const config = join(dir, `${name}.yaml`);
      await writeFile(
        config,
        `listen: 127.0.0.1:${dataPort}\nadmin: { listen: "127.0.0.1:${adminPort}" }\nworkers: 2\n` +
          `pools: [{ name: o, upstreams: ["${origin.url}"] }]\nroutes: [{ name: all, pool: o }]\n` +
          `cluster: { mode: eventual, node_name: ${name}, secret: "${CLUSTER_SECRET}", bind: "127.0.0.1:${gossip[i]}", join: [${gossip.map((port) => `"127.0.0.1:${port}"`).join(', ')}] }\n`,
      );
      const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
      const node: Node = { dataUrl: `http://127.0.0.1:${dataPort}`, adminUrl: `http://127.0.0.1:${adminPort}`, child, output: '' };
      child.stdout!.on('data', (chunk: Buffer) => (node.output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (node.output += chunk.toString()));
      nodes.push(node);
    }
    const [a, b] = nodes as [Node, Node];
    await until('both nodes ready with two members each', async () => (await Promise.all(nodes.map(stats))).every((each) => each.ring?.members === 2), nodes);

    // Bursts of fresh connections until both of b's workers hold the object.
    await until(
      "both of b's workers holding /shared",
      async () => {
        await Promise.all(Array.from({ length: 8 }, () => rawHttpGet(`${b.dataUrl}/shared`, {})));
        return (await stats(b)).tiers.hot.entries === 2;
      },
      nodes,
    );
    // Every copy fetched so far predates the purge.
    const fetchedBeforePurge = fetches;
    const purge = await fetchRaw(`${a.adminUrl}/v1/purge`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${b.dataUrl}/shared` }) });
    assert.equal(purge.status, 200);
    // Eventual mode: the purge reaches b after a's answer, and then in both of b's workers at once.
    await until("the purge reaching both of b's workers", async () => (await stats(b)).tiers.hot.entries === 0, nodes);
    const after = await Promise.all(Array.from({ length: 8 }, () => rawHttpGet(`${b.dataUrl}/shared`, {})));
    for (const answer of after) assert.ok(Number(answer.body.split(' ')[1]) > fetchedBeforePurge, `a copy fetched before the purge: ${answer.body}`);
  } finally {
    for (const node of nodes) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) continue;
      const exited = once(node.child, 'exit');
      node.child.kill('SIGTERM');
      await exited;
    }
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  }
});
