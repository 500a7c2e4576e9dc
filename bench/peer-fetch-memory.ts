// Issue 15: a 100 MiB object fetched through a peer, between two real `svc serve` nodes in strong mode,
// with both nodes' memory measured all along. The client asks node a for a key node b owns: b fetches
// it from the origin and stores it (max_object_bytes is raised above the object), and the body crosses
// to a in 1 MiB parts. Then the same again, now a HIT on b. a keeps no copy, so it should hold about a
// part; b holds the stored object once.
//
//   npm run build && node dist/bench/peer-fetch-memory.js [--mib 100]
//
// It prints figures; it asserts nothing.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { freePort, startProcess, waitFor } from './support/processes.js';
import { BENCH_ADMIN_TOKEN, startBenchCluster, type BenchNode } from './support/svc-cluster-processes.js';
import { mib, peakRssBytes, rssBytes, RssSampler } from './support/memory.js';

const { values } = parseArgs({ options: { mib: { type: 'string', default: '100' } } });
const bodyBytes = Number(values.mib) * 1024 * 1024;
const LARGE_SERVER = fileURLToPath(new URL('./servers/large-body-server.js', import.meta.url));
const SITE = 'bench.example';

async function ownerOf(asker: BenchNode, path: string): Promise<string> {
  const url = encodeURIComponent(`http://${SITE}${path}`);
  const response = await request(`${asker.adminUrl}/v1/stats?url=${url}`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  return ((await response.body.json()) as { ring: { owner: string } }).ring.owner;
}

async function readAll(node: BenchNode, path: string): Promise<{ bytes: number; cacheResult: string; ms: number }> {
  const started = Date.now();
  const response = await request(`${node.dataUrl}${path}`, { headers: { host: SITE } });
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) bytes += chunk.length;
  return { bytes, cacheResult: String(response.headers['x-cache']), ms: Date.now() - started };
}

const originPort = await freePort();
const origin = startProcess(process.execPath, [LARGE_SERVER, String(originPort), String(bodyBytes)]);
await waitFor(`http://127.0.0.1:${originPort}/`);
const objectLimit = Math.max(bodyBytes + 1024 * 1024, 8 * 1024 * 1024);
const cluster = await startBenchCluster({
  names: ['a', 'b'],
  mode: 'strong',
  originUrl: `http://127.0.0.1:${originPort}`,
  hopLimit: 2,
  extra: [`max_object_bytes: ${objectLimit}`, `hot_max_bytes: ${2 * objectLimit}`],
});
try {
  const [a, b] = cluster.nodes as [BenchNode, BenchNode];
  let path = '';
  for (let i = 0; path === ''; i++) if ((await ownerOf(a, `/object-${i}`)) === 'b') path = `/object-${i}`;
  const pids = [a.process.child.pid!, b.process.child.pid!];
  const idle = pids.map(rssBytes);
  console.log(`${mib(bodyBytes)} object owned by b, asked at a; max_object_bytes ${mib(objectLimit)}, Node ${process.version}`);
  for (const round of ['first (b misses and stores)', 'second (a HIT on b)']) {
    const sampler = new RssSampler(pids);
    const result = await readAll(a, path);
    const largest = sampler.stop();
    const rate = result.bytes / 1024 / 1024 / (result.ms / 1000);
    console.log(
      `${round}: ${mib(result.bytes)} (${result.bytes === bodyBytes ? 'whole' : 'SHORT'}), X-Cache ${result.cacheResult}, ${result.ms} ms, ${rate.toFixed(0)} MiB/s;` +
        ` largest RSS sampled: a ${mib(largest.get(pids[0]!) ?? 0)}, b ${mib(largest.get(pids[1]!) ?? 0)}`,
    );
  }
  console.log(`RSS idle before: a ${mib(idle[0]!)}, b ${mib(idle[1]!)}`);
  console.log(`peak RSS (VmHWM): a ${mib(peakRssBytes(pids[0]!))}, b ${mib(peakRssBytes(pids[1]!))}`);
  console.log(`RSS after:       a ${mib(rssBytes(pids[0]!))}, b ${mib(rssBytes(pids[1]!))}`);
} finally {
  await cluster.stop();
  await origin.stop();
}
