// Issue 2 item 10: cache-HIT throughput and latency through svc, beside the same requests sent
// straight to the origin and to a bare Node `http` server answering the same bytes from memory
// (Node's ceiling here). Each server runs in its own process; autocannon loads them one at a time.
//
//   npm run build && node dist/bench/hit-throughput.js [--seconds 10] [--connections 50] [--bytes 1024]
//
// It prints figures; it asserts nothing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess, waitFor, type Started } from './support/processes.js';
import { measureLoad, type LoadFigures } from './support/load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    bytes: { type: 'string', default: '1024' },
    warm: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const bytes = Number(values.bytes);

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const ORIGIN_PORT = 18_181;
const BARE_PORT = 18_182;
const SVC_PORT = 18_180;
const SVC_ADMIN_PORT = 19_180;

/** Figures of a run that measured its server's CPU. */
type Figures = LoadFigures & { cpuUsPerRequest: number };

async function load(name: string, url: string, server: Started): Promise<Figures> {
  return (await measureLoad(name, url, { connections, seconds, serverPid: server.child.pid })) as Figures;
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
const configPath = join(dir, 'svc.yaml');
await writeFile(
  configPath,
  [
    `listen: 127.0.0.1:${SVC_PORT}`,
    `admin: { listen: "127.0.0.1:${SVC_ADMIN_PORT}", token: bench-admin-token-0123456789 }`,
    'hot_max_bytes: 268435456',
    ...(values.warm ? [`warm: { path: ${JSON.stringify(join(dir, 'warm'))}, max_bytes: 1073741824 }`] : []),
    'pools: [{ name: origin, upstreams: ["http://127.0.0.1:' + ORIGIN_PORT + '"] }]',
    'routes: [{ name: bench, match: { path_prefix: / }, pool: origin }]',
  ].join('\n'),
);

const origin = startProcess(process.execPath, [FIXED_SERVER, String(ORIGIN_PORT), String(bytes)]);
const bare = startProcess(process.execPath, [FIXED_SERVER, String(BARE_PORT), String(bytes)]);
// svc's access log goes to /dev/null through stdout 'ignore'; sampling keeps it cheap anyway.
const svc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPath]);
try {
  await waitFor(`http://127.0.0.1:${ORIGIN_PORT}/`);
  await waitFor(`http://127.0.0.1:${BARE_PORT}/`);
  await waitFor(`http://127.0.0.1:${SVC_ADMIN_PORT}/readyz`);
  await waitFor(`http://127.0.0.1:${SVC_PORT}/hit`); // fills the cache: every later request is a HIT

  const rows = [
    await load('bare node http (ceiling)', `http://127.0.0.1:${BARE_PORT}/hit`, bare),
    await load('origin direct', `http://127.0.0.1:${ORIGIN_PORT}/hit`, origin),
    await load('svc HIT (hot tier)', `http://127.0.0.1:${SVC_PORT}/hit`, svc),
  ];
  const [ceiling, direct, svcHit] = rows as [Figures, Figures, Figures];
  console.log(`\n${bytes}-byte body, ${connections} connections, ${seconds} s per run, Node ${process.version}\n`);
  console.log('target                        req/s      p50 ms   p99 ms   server CPU µs/req   errors');
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(28)} ${row.requestsPerSecond.toFixed(0).padStart(8)}   ${row.p50Ms.toFixed(2).padStart(6)}   ${row.p99Ms
        .toFixed(2)
        .padStart(6)}   ${row.cpuUsPerRequest.toFixed(1).padStart(17)}   ${row.errors}`,
    );
  }
  console.log(`\nsvc HIT / bare node:    ${(svcHit.requestsPerSecond / ceiling.requestsPerSecond).toFixed(3)}x  (target >= 0.8x)`);
  console.log(`svc HIT / origin direct: ${(svcHit.requestsPerSecond / direct.requestsPerSecond).toFixed(3)}x`);
  console.log(`CPU per request, bare / svc: ${(ceiling.cpuUsPerRequest / svcHit.cpuUsPerRequest).toFixed(3)}x (the throughput ratio a CPU-bound server reaches)`);
} finally {
  await Promise.all([svc.stop(), origin.stop(), bare.stop()]);
  await rm(dir, { recursive: true, force: true });
}
