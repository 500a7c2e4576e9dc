// Issue 22: what concurrent misses for one key make at the origin when the data plane runs in one
// process and in two workers. Each worker joins the misses it receives into one origin request, but
// workers do not join each other's, so N workers may make up to N. For each `workers` value, `--keys`
// cold keys are asked `--clients` times at once, each request on a connection of its own (the
// kernel hands connections to either worker), while the origin takes `--delay-ms` to answer.
//
//   npm run build && node dist/bench/worker-coalescing.js [--clients 32] [--keys 20] [--delay-ms 200]
//
// It prints figures; it asserts nothing.
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { freePort, startProcess, waitFor } from './support/processes.js';
import { writeBenchSvcConfig } from './support/svc-config.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    keys: { type: 'string', default: '20' },
    'delay-ms': { type: 'string', default: '200' },
  },
});
const clients = Number(values.clients);
const keys = Number(values.keys);
const delayMs = Number(values['delay-ms']);
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

const originRequests = new Map<string, number>();
const origin = createServer((request, response) => {
  originRequests.set(request.url ?? '', (originRequests.get(request.url ?? '') ?? 0) + 1);
  setTimeout(() => response.writeHead(200, { 'cache-control': 'max-age=300' }).end('x'.repeat(1024)), delayMs);
});
const originPort = await freePort();
await new Promise<void>((resolve) => origin.listen(originPort, '127.0.0.1', resolve));
const dir = await mkdtemp(join(tmpdir(), 'svc-bench-coalescing-'));

console.log(`${clients} concurrent requests per cold key, ${keys} keys, origin answering in ${delayMs} ms`);
console.log('workers   origin requests per key (median, max)   over keys');
try {
  for (const workers of [1, 2]) {
    const [port, adminPort] = [await freePort(), await freePort()];
    const config = await writeBenchSvcConfig(join(dir, `svc-${workers}.yaml`), { port, adminPort, originPort, workers });
    const server = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', config]);
    try {
      await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
      const counts: number[] = [];
      for (let k = 0; k < keys; k++) {
        const path = `/w${workers}-k${k}`;
        await Promise.all(Array.from({ length: clients }, async () => (await request(`http://127.0.0.1:${port}${path}`)).body.text()));
        counts.push(originRequests.get(path) ?? 0);
      }
      counts.sort((a, b) => a - b);
      const median = counts[Math.floor(counts.length / 2)]!;
      console.log(`${String(workers).padStart(7)}   ${String(median).padStart(6)}, ${String(counts.at(-1)).padStart(3)}                            ${counts.join(' ')}`);
    } finally {
      await server.stop();
    }
  }
} finally {
  origin.close();
  await rm(dir, { recursive: true, force: true });
}
