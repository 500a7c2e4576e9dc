// Two `svc serve` nodes in one cluster, each with its data-plane threads (the default, one per core):
// the cluster has one member per node (the main thread's), not one per thread, a purge sent to one
// node reaches the one hot tier all threads of the other serve from, and in strong mode the key's
// owner is asked once for the whole asking node. Real processes, real gossip over UDP on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type EventuallyOptions } from '../../support/eventually.js';
import { startTestOrigin } from '../../support/test-origin.js';
import { freePort } from '../../../bench/support/free-port.js';
import { fetchRaw, rawHttpGet } from '../../support/http.js';
import { CLUSTER_SECRET } from '../../support/svc-cluster.js';
import { untilWarmSynced } from '../../support/workers/serve-process.js';

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

async function warmEntries(node: Node): Promise<number> {
  const body = JSON.parse((await fetchRaw(`${node.adminUrl}/v1/stats`, { headers: AUTH })).body) as { tiers: { warm: { entries: number } | null } };
  return body.tiers.warm?.entries ?? 0;
}

/** How `eventually` waits on these nodes: up to 30 s, a node not answering yet is not a failure, and a failure shows their output. */
function watching(nodes: Node[]): EventuallyOptions {
  return { timeoutMs: 30_000, everyMs: 100, tolerateErrors: true, detail: () => nodes.map((node) => node.output).join('\n') };
}

interface TwoNodes {
  nodes: [Node, Node];
  /** Starts node `i` (0: a, 1: b) again on its configuration, ports and warm tier. */
  launch(i: number): Node;
  close(): Promise<void>;
}

/**
 * Two `svc serve` nodes, a and b, in one cluster of `mode`, each with its default threads (and a warm tier
 * when `warm`), in front of `originUrl`; resolves once each sees two members.
 */
async function startTwoNodes(originUrl: string, mode: 'eventual' | 'strong', warm: boolean): Promise<TwoNodes> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cluster-workers-'));
  const gossip = [await freePort(), await freePort()];
  const ports = [
    [await freePort(), await freePort()],
    [await freePort(), await freePort()],
  ] as const;
  const configs = ['a', 'b'].map((name) => join(dir, `${name}.yaml`));
  for (const [i, name] of ['a', 'b'].entries()) {
    await writeFile(
      configs[i]!,
      `listen: 127.0.0.1:${ports[i]![0]}\nadmin: { listen: "127.0.0.1:${ports[i]![1]}" }\nhop_limit: 2\n` +
        (warm ? `warm: { path: "${join(dir, name, 'warm')}", max_bytes: 10000000 }\n` : '') +
        `pools: [{ name: o, upstreams: ["${originUrl}"] }]\nroutes: [{ name: all, pool: o }]\n` +
        `cluster: { mode: ${mode}, node_name: ${name}, secret: "${CLUSTER_SECRET}", bind: "127.0.0.1:${gossip[i]}", join: [${gossip.map((port) => `"127.0.0.1:${port}"`).join(', ')}] }\n`,
    );
  }
  const nodes: Node[] = [];
  const launch = (i: number): Node => {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', configs[i]!], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN } });
    const node: Node = { dataUrl: `http://127.0.0.1:${ports[i]![0]}`, adminUrl: `http://127.0.0.1:${ports[i]![1]}`, child, output: '' };
    child.stdout!.on('data', (chunk: Buffer) => (node.output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (node.output += chunk.toString()));
    nodes[i] = node;
    return node;
  };
  const close = async (): Promise<void> => {
    for (const node of nodes) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) continue;
      const exited = once(node.child, 'exit');
      node.child.kill('SIGCONT');
      node.child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  launch(0);
  launch(1);
  try {
    await eventually('both nodes ready with two members each', () => Promise.all(nodes.map(stats)), (all) => all.every((each) => each.ring?.members === 2), watching(nodes));
  } catch (error) {
    await close();
    throw error;
  }
  return { nodes: nodes as [Node, Node], launch, close };
}

test('an eventual cluster of two nodes with several threads each: one member per node, and a purge reaches every thread of the other node', async () => {
  let fetches = 0;
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
  const cluster = await startTwoNodes(origin.url, 'eventual', false);
  const { nodes } = cluster;
  try {
    const [a, b] = nodes;

    // Fetched once; then fresh connections, which the kernel spreads over b's threads, all hit it.
    assert.equal((await rawHttpGet(`${b.dataUrl}/shared`, {})).body, 'fetch 1');
    const hits = await Promise.all(Array.from({ length: 16 }, () => rawHttpGet(`${b.dataUrl}/shared`, {})));
    for (const answer of hits) assert.deepEqual([answer.body, answer.headers['x-cache']], ['fetch 1', 'HIT']);
    assert.equal((await stats(b)).tiers.hot.entries, 1, 'one copy for the node');
    // Every copy fetched so far predates the purge.
    const fetchedBeforePurge = fetches;
    const purge = await fetchRaw(`${a.adminUrl}/v1/purge`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${b.dataUrl}/shared` }) });
    assert.equal(purge.status, 200);
    // Eventual mode: the purge reaches b after a's answer, and then every thread of b at once.
    await eventually('the purge reaching b', async () => (await stats(b)).tiers.hot.entries, (entries) => entries === 0, watching(nodes));
    const after = await Promise.all(Array.from({ length: 8 }, () => rawHttpGet(`${b.dataUrl}/shared`, {})));
    for (const answer of after) assert.ok(Number(answer.body.split(' ')[1]) > fetchedBeforePurge, `a copy fetched before the purge: ${answer.body}`);
  } finally {
    await cluster.close();
    await origin.close();
  }
});

test('a restarted node with a warm tier serves nothing fetched before it started until it has caught up', async () => {
  let fetches = 0;
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
  const cluster = await startTwoNodes(origin.url, 'eventual', true);
  try {
    const [a, b] = cluster.nodes;
    const before = Date.now();
    const old = await rawHttpGet(`${b.dataUrl}/kept`, {});
    assert.equal(old.body, 'fetch 1');
    // b's warm tier holds the object once the primary committed the worker's store.
    await untilWarmSynced(b.adminUrl, before);
    const stopped = once(b.child, 'exit');
    b.child.kill('SIGTERM');
    await stopped;
    // Purged while b is down; then a is paused, so that b cannot catch up when it comes back.
    const purge = await fetchRaw(`${a.adminUrl}/v1/purge`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${b.dataUrl}/kept` }) });
    assert.equal(purge.status, 200);
    a.child.kill('SIGSTOP');
    try {
      const restarted = cluster.launch(1);
      await eventually("b's warm tier indexed", () => restarted.output.includes('"msg":"warm tier indexed"'), (indexed) => indexed, watching(cluster.nodes));
      await eventually("b's workers serving", async () => (await rawHttpGet(`${restarted.dataUrl}/probe`, {})).status, (status) => status === 200, watching(cluster.nodes));
      // The member starts after the data plane: wait until it says it is catching up.
      const caughtUp = async (): Promise<boolean | undefined> => {
        const detail = JSON.parse((await fetchRaw(`${restarted.adminUrl}/readyz?detail=1`)).body) as { conditions: { name: string; ready: boolean }[] };
        return detail.conditions.find((condition) => condition.name === 'cluster_caught_up')?.ready;
      };
      await eventually("b's member started", caughtUp, (ready) => ready !== undefined, watching(cluster.nodes));
      // A negative check: b stays behind while a is stopped. Nothing marks a catch-up attempt that
      // found no peer to ask, so this gives a wrong "caught up" 300 ms to show.
      await sleep(300);
      assert.equal(await caughtUp(), false, 'b has not caught up');
      const answers = await Promise.all(Array.from({ length: 8 }, () => rawHttpGet(`${restarted.dataUrl}/kept`, {})));
      for (const answer of answers) assert.notEqual(answer.body, 'fetch 1', `b served the copy fetched before it stopped, which a purge it has not seen yet covers (${String(answer.headers['x-cache'])})`);
    } finally {
      a.child.kill('SIGCONT');
    }
  } finally {
    await cluster.close();
    await origin.close();
  }
});

test('a strong cluster of two nodes with several threads and a warm tier each: the owner is asked once for the whole asking node, and the origin once', async () => {
  let fetches = 0;
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=300' }, body: `fetch ${++fetches}` }));
  const cluster = await startTwoNodes(origin.url, 'strong', true);
  try {
    const [a] = cluster.nodes;
    // A path b owns, as a's member places it.
    let path = '';
    for (let i = 0; path === ''; i++) {
      const owner = JSON.parse((await fetchRaw(`${a.adminUrl}/v1/stats?url=${encodeURIComponent(`${a.dataUrl}/owned-${i}`)}`, { headers: AUTH })).body) as { ring: { owner: string } };
      if (owner.ring.owner === 'b') path = `/owned-${i}`;
    }
    // Bursts of fresh connections reach every thread of a, which hands the key to its home thread:
    // the owner sees one peer fetch per burst at most, and fetches from the origin once.
    const answers: { body: string; cache: string }[] = [];
    for (let burst = 0; burst < 6; burst++) {
      for (const answer of await Promise.all(Array.from({ length: 8 }, () => rawHttpGet(`${a.dataUrl}${path}`, {})))) {
        answers.push({ body: answer.body, cache: String(answer.headers['x-cache']) });
      }
    }
    for (const answer of answers) assert.equal(answer.body, 'fetch 1', `every answer is the owner's one fetch (${answer.cache})`);
    assert.equal(origin.requests.filter((request) => request.url === path).length, 1);
    // a keeps no copy of what b owns.
    assert.equal((await stats(a)).tiers.hot.entries, 0);
    // The peer fetches were a's home thread's: /metrics sums every thread's. Only the first missed at b.
    const metrics = (await fetchRaw(`${a.adminUrl}/metrics`)).body;
    const hits = Number(/^svc_peer_fetch_hits_total (\d+)$/m.exec(metrics)?.[1]);
    const misses = Number(/^svc_peer_fetch_misses_total (\d+)$/m.exec(metrics)?.[1]);
    assert.equal(misses, 1, metrics);
    assert.ok(hits >= 1 && hits <= answers.length, `${hits} peer fetches answered from b's cache for ${answers.length} answers`);
  } finally {
    await cluster.close();
    await origin.close();
  }
});

test('a strong node restarted after 10,000 invalidations it missed serves none of what they cover, at readiness or after', async (t) => {
  let generation = 1;
  const origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url} generation ${generation}` }));
  const cluster = await startTwoNodes(origin.url, 'strong', true);
  try {
    const [a, b] = cluster.nodes;
    // Keys b owns: b keeps them, in both tiers.
    const owned: string[] = [];
    for (let i = 0; owned.length < 100; i++) {
      const path = `/missed-${i}`;
      const ring = JSON.parse((await fetchRaw(`${b.adminUrl}/v1/stats?url=${encodeURIComponent(`${b.dataUrl}${path}`)}`, { headers: AUTH })).body) as { ring: { owner: string } };
      if (ring.ring.owner === 'b') owned.push(path);
    }
    for (const path of owned) await rawHttpGet(`${b.dataUrl}${path}`, {});
    await eventually("b's warm tier holding what it fetched", () => warmEntries(b), (entries) => entries >= owned.length, watching(cluster.nodes));

    b.child.kill('SIGKILL');
    await once(b.child, 'exit');
    generation = 2;
    const urls = [...owned.map((path) => `${b.dataUrl}${path}`), ...Array.from({ length: 10_000 - owned.length }, (_, i) => `${b.dataUrl}/filler-${i}`)];
    for (let from = 0; from < urls.length; from += 1_000) {
      const batch = await fetchRaw(`${a.adminUrl}/v1/purge/batch`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ urls: urls.slice(from, from + 1_000) }) });
      assert.equal(batch.status, 200, batch.body);
    }

    const startedAt = Date.now();
    const restarted = cluster.launch(1);
    let stale: string[] = [];
    const readStale = async (): Promise<string[]> => {
      const answers = await Promise.all(owned.map((path) => rawHttpGet(`${restarted.dataUrl}${path}`, {}).catch(() => undefined)));
      return answers.flatMap((answer, i) => (answer !== undefined && answer.status === 200 && answer.body.endsWith('generation 1') ? [`${owned[i]} (${String(answer.headers['x-cache'])})`] : []));
    };
    await eventually('b ready again', async () => (await fetchRaw(`${restarted.adminUrl}/readyz`)).status, (status) => status === 200, watching(cluster.nodes));
    const readyMs = Date.now() - startedAt;
    let reads = 0;
    while (Date.now() - startedAt < readyMs + 2_000) {
      stale = [...stale, ...(await readStale())];
      reads += owned.length;
    }
    t.diagnostic(`restart to ready after 10,000 missed invalidations: ${readyMs} ms; ${reads} reads of purged objects at and after readiness, ${stale.length} stale`);
    assert.deepEqual(stale, []);
  } finally {
    await cluster.close();
    await origin.close();
  }
});
