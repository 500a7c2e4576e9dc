// Issues 22 and 27: `svc serve`'s 1 KiB HIT with `workers: 1` (the data plane in the main thread) and
// `workers: 2` (two data-plane threads listening on the port with reusePort, the kernel handing out
// connections, one hot tier in shared memory), each also with Node's internals on the hit path switched
// off (SVC_NODE_INTERNALS=off), side by side in one run. Server CPU is the process's, every thread counted.
// How the port is shared was chosen by bench/listen-mechanisms.ts.
//
//   npm run build && node dist/bench/worker-scaling.js [--rounds 3] [--seconds 5] [--connections 64] [--bytes 1024]
//
// wrk loads one target at a time from the same cores, as the anchors script does; the targets take
// turns round after round (see support/wrk-rounds.ts). It prints figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess, waitFor, type Started } from './support/processes.js';
import { writeBenchSvcConfig } from './support/svc-config.js';
import { requireWrk, runWrkRounds, type WrkTarget } from './support/wrk-rounds.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    bytes: { type: 'string', default: '1024' },
  },
});
requireWrk();

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const ORIGIN_PORT = 18_190;

interface Variant {
  name: string;
  /** The configuration's `workers`. */
  workers: number;
  env?: NodeJS.ProcessEnv;
}

const variants: Variant[] = [
  { name: 'svc workers 1', workers: 1 },
  { name: 'svc workers 2', workers: 2 },
  { name: 'svc workers 2, SVC_NODE_INTERNALS=off', workers: 2, env: { SVC_NODE_INTERNALS: 'off' } },
  { name: 'svc workers 1, SVC_NODE_INTERNALS=off', workers: 1, env: { SVC_NODE_INTERNALS: 'off' } },
];

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-workers-'));
const origin = startProcess(process.execPath, [FIXED_SERVER, String(ORIGIN_PORT), values.bytes]);
const servers: Started[] = [origin];
try {
  await waitFor(`http://127.0.0.1:${ORIGIN_PORT}/`);
  const targets: WrkTarget[] = [];
  for (const [i, variant] of variants.entries()) {
    const port = ORIGIN_PORT + 1 + i;
    const config = await writeBenchSvcConfig(join(dir, `svc-${port}.yaml`), { port, adminPort: 19_300 + i * 10, originPort: ORIGIN_PORT, workers: variant.workers, extra: ['hot_max_bytes: 268435456'] });
    const server = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', config], variant.env);
    servers.push(server);
    const url = `http://127.0.0.1:${port}/hit`;
    await waitFor(`http://127.0.0.1:${19_300 + i * 10}/readyz`);
    await waitFor(url); // fills the node's one cache
    targets.push({ name: variant.name, url, server });
  }
  runWrkRounds(targets, { rounds: Number(values.rounds), seconds: Number(values.seconds), connections: Number(values.connections) }, `${values.bytes}-byte HIT, Node ${process.version}`);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await rm(dir, { recursive: true, force: true });
}
