// A data-plane worker thread for the supervisor's tests: an HTTP server on the shared port
// (workerData.port, SO_REUSEPORT) that answers with its threadId and whether it still holds the path
// asked for, the real metrics of a node, the real logger, and the main thread's calls as the tests
// drive them: `invalidate` purges a path, except for the URLs `hang` (never answered), `fail` (throws)
// and `log:<lines>:<padBytes>` (logs that many lines).
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { threadId, workerData } from 'node:worker_threads';
import { MainChannel } from '../../../src/node/workers/main-channel.js';
import { answerMetricsCalls } from '../../../src/node/workers/worker-metrics.js';
import { NodeMetrics } from '../../../src/observe/metrics.js';
import { createLogger, LogOutput } from '../../../src/observe/logger.js';

interface TestWorkerData {
  port: number;
  crashFile?: string;
  hangOnStop?: boolean;
}

const data = workerData as TestWorkerData;
const channel = MainChannel.open();
// A restarted worker that finds this file dies at once: the tests' crash loop.
if (data.crashFile !== undefined && existsSync(data.crashFile)) process.exit(3);

const output = new LogOutput('json', process.stdout);
const logger = createLogger({ destination: output });
const held = new Set(['/a', '/b', '/c']);
const metrics = new NodeMetrics();
answerMetricsCalls(channel, metrics.registry);
channel.handle('describe', () => `http://127.0.0.1:${data.port}`);
channel.handle('invalidate', (invalidation) => {
  if (invalidation.type !== 'purge') return 0;
  const { url } = invalidation;
  if (url === 'hang') return new Promise<number>(() => undefined);
  if (url === 'fail') throw new Error('refused on purpose');
  if (url.startsWith('log:')) {
    const [, lines, padBytes] = url.split(':').map(Number) as [number, number, number];
    for (let i = 0; i < lines; i++) logger.info({ worker_thread: threadId, i, pad: 'x'.repeat(padBytes) }, 'line');
    return lines;
  }
  held.delete(url);
  return threadId;
});

const server = createServer((request, response) => {
  const path = request.url ?? '/';
  const cached = held.has(path);
  metrics.observeRequest({ method: request.method ?? 'GET', status: 200, cacheResult: cached ? 'HIT' : 'MISS', source: cached ? 'hot' : 'origin', route: 'main', durationSeconds: 0.0003, bytesOut: 2, traceId: undefined });
  response.setHeader('connection', 'close');
  response.end(JSON.stringify({ thread: threadId, cached }));
});
channel.onStop(async () => {
  if (data.hangOnStop) await new Promise(() => undefined);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => output.flush(() => resolve()));
});
server.listen({ port: data.port, host: '127.0.0.1', reusePort: true }, () => channel.reportReady());
