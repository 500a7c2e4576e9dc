// Issue 3 item 10: cache-HIT throughput and latency (p50, p99) through a real svc process from the
// hot tier and from the warm tier, and the heap an entry costs beyond its body when svc itself stored
// it (100k entries by default).
//
//   npm run build && node --expose-gc dist/bench/tier-throughput.js [--seconds 10] [--connections 50] [--bytes 1024] [--entries 100000]
//
// The warm run gives svc a hot tier of one byte, so no entry fits in memory and every hit is read
// from lmdb. The memory run starts a node in this process, fills it through HTTP with distinct URLs
// (256-byte bodies, the headers of a typical static asset) and compares the heap after a full GC
// with the heap of the same node before the fill. It prints figures; it asserts nothing.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/observe/logger.js';
import { startNode } from '../src/node/svc-node.js';
import { freePort, startProcess, waitFor } from './support/processes.js';
import { measureLoad, type LoadFigures } from './support/load.js';
import { BENCH_ADMIN_TOKEN, writeBenchSvcConfig } from './support/svc-config.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    bytes: { type: 'string', default: '1024' },
    entries: { type: 'string', default: '100000' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const bytes = Number(values.bytes);
const entryCount = Number(values.entries);

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with node --expose-gc (see the top of bench/tier-throughput.ts)');
  process.exit(1);
}

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const [ORIGIN_PORT, HOT_PORT, HOT_ADMIN_PORT, WARM_PORT, WARM_ADMIN_PORT] = [
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
];

const load = (name: string, url: string): Promise<LoadFigures> => measureLoad(name, url, { connections, seconds });


async function xCacheSource(adminPort: number): Promise<string> {
  const response = await request(`http://127.0.0.1:${adminPort}/metrics`);
  const text = await response.body.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('svc_requests_total{') && line.includes('cache_result="HIT"'))
    .map((line) => line.replace(/^svc_requests_total/, '  '))
    .join('\n');
}

async function throughput(dir: string): Promise<void> {
  const hotConfig = await writeBenchSvcConfig(join(dir, 'hot.yaml'), {
    port: HOT_PORT,
    adminPort: HOT_ADMIN_PORT,
    originPort: ORIGIN_PORT,
    extra: ['hot_max_bytes: 268435456'],
  });
  const warmConfig = await writeBenchSvcConfig(join(dir, 'warm.yaml'), {
    port: WARM_PORT,
    adminPort: WARM_ADMIN_PORT,
    originPort: ORIGIN_PORT,
    extra: [
      // One byte: no entry fits in memory, so every hit is a warm-tier read.
      'hot_max_bytes: 1',
      `warm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 1073741824 }`,
    ],
  });
  const origin = startProcess(process.execPath, [FIXED_SERVER, String(ORIGIN_PORT), String(bytes)]);
  const hot = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', hotConfig]);
  const warm = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', warmConfig]);
  try {
    await waitFor(`http://127.0.0.1:${ORIGIN_PORT}/`);
    await waitFor(`http://127.0.0.1:${HOT_ADMIN_PORT}/readyz`);
    await waitFor(`http://127.0.0.1:${WARM_ADMIN_PORT}/readyz`);
    // The first request fills each cache: every later request is a HIT.
    await waitFor(`http://127.0.0.1:${HOT_PORT}/hit`);
    await waitFor(`http://127.0.0.1:${WARM_PORT}/hit`);
    const rows = [
      await load('origin direct', `http://127.0.0.1:${ORIGIN_PORT}/hit`),
      await load('svc HIT, hot tier', `http://127.0.0.1:${HOT_PORT}/hit`),
      await load('svc HIT, warm tier', `http://127.0.0.1:${WARM_PORT}/hit`),
    ];
    console.log(`\n${bytes}-byte body, ${connections} connections, ${seconds} s per run, Node ${process.version}\n`);
    console.log('target                        req/s      p50 ms   p99 ms   errors');
    for (const row of rows) {
      console.log(
        `${row.name.padEnd(28)} ${row.requestsPerSecond.toFixed(0).padStart(8)}   ${row.p50Ms.toFixed(2).padStart(6)}   ${row.p99Ms
          .toFixed(2)
          .padStart(6)}   ${row.errors}`,
      );
    }
    const [, hotRow, warmRow] = rows as [LoadFigures, LoadFigures, LoadFigures];
    console.log(`\nwarm / hot HIT throughput: ${(warmRow.requestsPerSecond / hotRow.requestsPerSecond).toFixed(3)}x`);
    console.log(`HITs by source, hot-tier node:\n${await xCacheSource(HOT_ADMIN_PORT)}`);
    console.log(`HITs by source, warm-tier node:\n${await xCacheSource(WARM_ADMIN_PORT)}`);
  } finally {
    await Promise.all([hot.stop(), warm.stop(), origin.stop()]);
  }
}

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Fills an in-process node with `entryCount` entries through HTTP and prints heap bytes per entry. */
async function memoryPerEntry(): Promise<void> {
  const BODY_BYTES = 256;
  const body = Buffer.alloc(BODY_BYTES, 'b');
  const lastModified = new Date(Date.now() - 86_400_000).toUTCString();
  const origin = createServer((req, res) => {
    res.writeHead(200, {
      'content-type': 'image/webp',
      'content-length': String(BODY_BYTES),
      'cache-control': 'public, max-age=86400',
      etag: `"${(req.url ?? '').length.toString(16)}-${req.url ?? ''}"`,
      'last-modified': lastModified,
      server: 'nginx/1.25.3',
      'accept-ranges': 'bytes',
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const node = await startNode({
    config: parseConfig({
      listen: '127.0.0.1:0',
      admin: { listen: '127.0.0.1:0', token: BENCH_ADMIN_TOKEN },
      hot_max_bytes: 4 * 1024 * 1024 * 1024,
      pools: [{ name: 'origin', upstreams: [originUrl] }],
      routes: [{ name: 'assets', match: { path_prefix: '/' }, pool: 'origin' }],
    }),
    logger: createLogger({ destination: silent }),
    env: {},
  });
  const client = new Agent({ connections: 32 });
  try {
    const fill = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const response = await request(`${node.dataUrl}/assets/img/product-${i}.webp?v=3`, { dispatcher: client });
        await response.body.dump();
      }
    };
    // The first requests set up pools, metrics children and JIT: not part of the entries' cost.
    await fill(0, 1_000);
    const before = heapUsed();
    const entriesBefore = node.cache.hot.entryCount;
    const perWorker = Math.ceil((entryCount - 1_000) / 32);
    await Promise.all(Array.from({ length: 32 }, (_, w) => fill(1_000 + w * perWorker, Math.min(entryCount, 1_000 + (w + 1) * perWorker))));
    const after = heapUsed();
    const stored = node.cache.hot.entryCount - entriesBefore;
    console.log(`\nmemory: ${node.cache.hot.entryCount} entries stored by svc (${BODY_BYTES}-byte bodies, 7 origin headers)`);
    console.log(`heap beyond the body: ${((after - before) / stored).toFixed(0)} B/entry (bodies live outside the heap)`);
    console.log(`by entrySizeBytes: ${(node.cache.hot.byteCount / node.cache.hot.entryCount).toFixed(0)} B/entry`);
  } finally {
    await client.close();
    await node.stop();
    await new Promise((resolve) => origin.close(resolve));
  }
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-tiers-'));
try {
  await throughput(dir);
  await memoryPerEntry();
} finally {
  await rm(dir, { recursive: true, force: true });
}
