// Request/response latency and throughput, and packet rate, of each real Transport on loopback.
//
//   npx tsc -p tsconfig.json && node dist/bench/transport-throughput.js [seconds-per-figure]
//
// For each transport (udp in the clear; udp with mutual TLS and sealed packets; libp2p when
// transports/libp2p exists; the simulator is skipped, its time is virtual): two transports in this
// process, an echo handler, then for 1 KiB and 1 MiB bodies the p50/p99 latency of sequential
// requests and the throughput of 32 concurrent requesters; then the rate at which 1 KiB packets
// arrive when one side sends as fast as it can (and the share lost). It prints figures; it asserts
// nothing.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Transport } from '../cluster/transport.js';
import type * as Libp2pModule from '../transports/libp2p/index.js';
import { createUdpTransport, type UdpTransportOptions } from '../transports/udp/index.js';

const SECONDS = Number(process.argv[2] ?? 3);
const CONCURRENCY = 32;
const PACKET_BYTES = 1024;
/**
 * Packets sent per event-loop turn. Sender and receiver share this process's loop, and libuv reads at
 * most 32 datagrams per socket per turn, so a larger batch would measure that limit as loss.
 */
const PACKET_BATCH = 16;
const TIMEOUT_MS = 30_000;
const TLS_DIR = fileURLToPath(new URL('../../test/transports/fixtures/tls/', import.meta.url));

interface Pair {
  readonly name: string;
  readonly a: Transport;
  readonly b: Transport;
  close(): Promise<void>;
}

function percentile(sortedMs: number[], fraction: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor(sortedMs.length * fraction))] ?? NaN;
}

async function latency(pair: Pair, body: Uint8Array): Promise<{ p50: number; p99: number; count: number }> {
  const samples: number[] = [];
  const endMs = performance.now() + SECONDS * 1000;
  while (performance.now() < endMs) {
    const start = performance.now();
    await pair.a.request(pair.b.localAddress, 'echo', body, { timeoutMs: TIMEOUT_MS });
    samples.push(performance.now() - start);
  }
  samples.sort((x, y) => x - y);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), count: samples.length };
}

async function throughput(pair: Pair, body: Uint8Array): Promise<{ perSecond: number; mibPerSecond: number }> {
  let done = 0;
  const start = performance.now();
  const endMs = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < endMs) {
        await pair.a.request(pair.b.localAddress, 'echo', body, { timeoutMs: TIMEOUT_MS });
        done++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  // Each exchange moves the body twice: there and back.
  return { perSecond: done / seconds, mibPerSecond: (2 * done * body.byteLength) / seconds / 1024 / 1024 };
}

async function packetRate(pair: Pair): Promise<{ perSecond: number; lostShare: number }> {
  let received = 0;
  pair.b.onPacket(() => received++);
  const packet = new Uint8Array(Math.min(PACKET_BYTES, pair.a.maxPacketBytes));
  let sent = 0;
  const start = performance.now();
  const endMs = start + SECONDS * 1000;
  while (performance.now() < endMs) {
    for (let i = 0; i < PACKET_BATCH; i++) pair.a.sendPacket(pair.b.localAddress, packet);
    sent += PACKET_BATCH;
    // Let the socket drain and the receiver run, as a protocol loop would.
    await nextMacrotask();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: received / seconds, lostShare: sent === 0 ? 0 : 1 - received / sent };
}

async function udpPair(name: string, options: Partial<UdpTransportOptions>): Promise<Pair> {
  const [a, b] = [createUdpTransport({ bind: '127.0.0.1:0', ...options }), createUdpTransport({ bind: '127.0.0.1:0', ...options })];
  await Promise.all([a.start(), b.start()]);
  return { name, a, b, close: async () => void (await Promise.all([a.stop(), b.stop()])) };
}

/** Two libp2p transports, or why there are none (transports/libp2p is built separately). */
async function libp2pPair(): Promise<Pair | string> {
  const modulePath = '../transports/libp2p/index.js';
  let libp2p: typeof Libp2pModule;
  try {
    libp2p = (await import(modulePath)) as typeof Libp2pModule;
  } catch (error) {
    return `transports/libp2p not available (${error instanceof Error ? error.message : String(error)})`;
  }
  const dirs = [await mkdtemp(join(tmpdir(), 'bench-libp2p-')), await mkdtemp(join(tmpdir(), 'bench-libp2p-'))];
  const keys = await Promise.all(dirs.map((dir) => libp2p.loadOrCreateNodeKey(dir)));
  const allowedPeerIds = keys.map((key) => key.peerId);
  const a: Transport = libp2p.createLibp2pTransport({ dataDir: dirs[0]!, allowedPeerIds });
  const b: Transport = libp2p.createLibp2pTransport({ dataDir: dirs[1]!, allowedPeerIds });
  await Promise.all([a.start(), b.start()]);
  return {
    name: 'libp2p (tcp, noise, yamux)',
    a,
    b,
    async close() {
      await Promise.all([a.stop(), b.stop()]);
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

function format(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

async function measure(pair: Pair): Promise<void> {
  pair.b.onRequest('echo', (_from, body) => Promise.resolve(body));
  process.stdout.write(`\n${pair.name}\n`);
  for (const [label, bytes] of [
    ['1 KiB', 1024],
    ['1 MiB', 1024 * 1024],
  ] as const) {
    const body = new Uint8Array(bytes).fill(7);
    // Warm the connection pool and the JIT before measuring.
    for (let i = 0; i < 20; i++) await pair.a.request(pair.b.localAddress, 'echo', body, { timeoutMs: TIMEOUT_MS });
    const { p50, p99, count } = await latency(pair, body);
    const { perSecond, mibPerSecond } = await throughput(pair, body);
    process.stdout.write(
      `  ${label.padEnd(6)} latency p50 ${format(p50).padStart(9)}  p99 ${format(p99).padStart(9)}  (${count} sequential)` +
        `   throughput ${perSecond.toFixed(0).padStart(6)} req/s  ${mibPerSecond.toFixed(1).padStart(7)} MiB/s (${CONCURRENCY} concurrent)\n`,
    );
  }
  const packets = await packetRate(pair);
  process.stdout.write(`  packets ${PACKET_BYTES} B: ${packets.perSecond.toFixed(0)} received/s, ${(packets.lostShare * 100).toFixed(1)}% lost\n`);
}

async function main(): Promise<void> {
  process.stdout.write(`node ${process.version}, ${SECONDS} s per figure; sim transport skipped (virtual time)\n`);
  const tls = {
    cert: await readFile(join(TLS_DIR, 'node.crt')),
    key: await readFile(join(TLS_DIR, 'node.key')),
    ca: await readFile(join(TLS_DIR, 'cluster-ca.crt')),
  };
  const factories: (() => Promise<Pair | string>)[] = [
    () => udpPair('udp (plain UDP + HTTP)', {}),
    () => udpPair('udp (sealed packets + mutual TLS)', { tls, gossipKeys: [Buffer.alloc(32, 1)] }),
    libp2pPair,
  ];
  for (const factory of factories) {
    const pair = await factory();
    if (typeof pair === 'string') {
      process.stdout.write(`\nlibp2p: skipped, ${pair}\n`);
      continue;
    }
    try {
      await measure(pair);
    } finally {
      await pair.close();
    }
  }
}

await main();
