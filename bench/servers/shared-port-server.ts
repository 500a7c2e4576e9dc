// A bare Node `http` server answering 1 KiB from memory, served by N processes or threads in one of
// the ways Node can share a listening port, for the benchmark that chose how svc's workers share
// theirs (bench/listen-mechanisms.ts):
//   single               one process
//   round-robin          node:cluster, the primary accepts and hands connections out (SCHED_RR)
//   os                   node:cluster, every worker accepts on the primary's socket (SCHED_NONE)
//   reuseport-processes  N processes, each its own socket with SO_REUSEPORT (Node 22.12+)
//   reuseport-threads    N worker_threads, each its own socket with SO_REUSEPORT (Node 22.12+)
// Usage: node shared-port-server.js <port> <workers> <mechanism>
import cluster from 'node:cluster';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread } from 'node:worker_threads';
import { pinTickObjectShape } from '../../src/node/tick-object-shape.js';

const [port, workers, mechanism] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4] ?? 'single'];
const body = Buffer.alloc(1024, 'a');
const self = fileURLToPath(import.meta.url);

async function serve(reusePort: boolean): Promise<void> {
  await pinTickObjectShape();
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1024', 'cache-control': 'public, max-age=3600', 'x-cache': 'HIT' });
    response.end(body);
  });
  // `reusePort` is unknown to Node 20's types and ignored by Node 20 itself.
  server.listen({ port, host: '127.0.0.1', reusePort, exclusive: reusePort } as Parameters<typeof server.listen>[0]);
}

const isChild = process.env.SHARED_PORT_CHILD === '1';
if (mechanism === 'single' || isChild || !isMainThread || (cluster.isWorker && (mechanism === 'round-robin' || mechanism === 'os'))) {
  await serve(mechanism.startsWith('reuseport'));
} else if (mechanism === 'round-robin' || mechanism === 'os') {
  cluster.schedulingPolicy = mechanism === 'os' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  for (let i = 0; i < workers; i++) cluster.fork();
} else if (mechanism === 'reuseport-processes') {
  for (let i = 0; i < workers; i++) fork(self, process.argv.slice(2), { env: { ...process.env, SHARED_PORT_CHILD: '1' } });
} else if (mechanism === 'reuseport-threads') {
  for (let i = 0; i < workers; i++) new Worker(self, { argv: process.argv.slice(2) });
} else {
  throw new Error(`unknown mechanism ${mechanism}`);
}
// Everything ends with the primary, which the benchmark stops with SIGTERM: threads with its
// process, cluster workers and forked children when their IPC channel closes.
if (isChild) process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
