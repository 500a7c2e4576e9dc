// Issue 22: how N Node processes or threads can share one listening port, measured on a bare
// `http` server answering 1 KiB (bench/servers/shared-port-server.ts), side by side in one run:
// one process; node:cluster with the primary handing connections out (round robin) or the kernel
// (`os`); and, on a Node that has `reusePort` (22.12+), N processes or N worker_threads each with
// its own SO_REUSEPORT socket.
//
//   npm run build && node dist/bench/listen-mechanisms.js [--node22 <path of a Node 22.12+ binary>] [--rounds 3] [--seconds 5]
//
// It prints figures; it asserts nothing.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess, waitFor, type Started } from './support/processes.js';
import { requireWrk, runWrkRounds, type WrkTarget } from './support/wrk-rounds.js';

const { values } = parseArgs({
  options: {
    node22: { type: 'string' },
    workers: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
  },
});
requireWrk();

const SERVER = fileURLToPath(new URL('./servers/shared-port-server.js', import.meta.url));
const workers = values.workers;
const nodes: [string, string][] = [[process.execPath, process.version]];
if (values.node22 !== undefined) nodes.push([values.node22, 'Node 22']);

const plan: { node: [string, string]; mechanism: string }[] = [];
for (const node of nodes) {
  for (const mechanism of ['single', 'round-robin', 'os']) plan.push({ node, mechanism });
  if (node[0] !== process.execPath) for (const mechanism of ['reuseport-processes', 'reuseport-threads']) plan.push({ node, mechanism });
}

const servers: Started[] = [];
try {
  const targets: WrkTarget[] = [];
  for (const [i, { node, mechanism }] of plan.entries()) {
    const port = 18_200 + i;
    const server = startProcess(node[0], [SERVER, String(port), workers, mechanism]);
    servers.push(server);
    const url = `http://127.0.0.1:${port}/`;
    await waitFor(url);
    const version = node[0] === process.execPath ? process.version : node[1];
    targets.push({ name: `${version} ${mechanism}${mechanism === 'single' ? '' : ` x${workers}`}`, url, server });
  }
  runWrkRounds(targets, { rounds: Number(values.rounds), seconds: Number(values.seconds), connections: Number(values.connections) }, '1 KiB from memory, bare node:http');
} finally {
  await Promise.all(servers.map((server) => server.stop()));
}
