// A data-plane worker for the supervisor's tests: an HTTP server on the shared port (TEST_PORT) that
// answers with its pid and whether it still holds the path asked for, the real metrics of a node,
// the real logger, and call handlers the tests drive (purge, hang, fail, log).
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { PrimaryChannel } from '../../../src/node/workers/primary-channel.js';
import { answerMetricsCalls } from '../../../src/node/workers/worker-metrics.js';
import { NodeMetrics } from '../../../src/observe/metrics.js';
import { createLogger } from '../../../src/observe/logger.js';

const channel = PrimaryChannel.open();
// A restarted worker that finds this file dies at once: the tests' crash loop.
const crashFile = process.env.TEST_CRASH_FILE;
if (crashFile !== undefined && existsSync(crashFile)) process.exit(3);

const logger = createLogger();
const held = new Set(['/a', '/b', '/c']);
const metrics = new NodeMetrics();
answerMetricsCalls(channel, metrics.registry);
channel.handle('purge', (path) => {
  held.delete(path as string);
  return process.pid;
});
channel.handle('hang', () => new Promise(() => undefined));
channel.handle('fail', () => {
  throw new Error('refused on purpose');
});
channel.handle('log', (payload) => {
  const { lines, padBytes } = payload as { lines: number; padBytes: number };
  for (let i = 0; i < lines; i++) logger.info({ worker_pid: process.pid, i, pad: 'x'.repeat(padBytes) }, 'line');
  return lines;
});

const server = createServer((request, response) => {
  const path = request.url ?? '/';
  const cached = held.has(path);
  metrics.observeRequest({ method: request.method ?? 'GET', status: 200, cacheResult: cached ? 'HIT' : 'MISS', source: cached ? 'hot' : 'origin', route: 'main', durationSeconds: 0.0003, bytesOut: 2, traceId: undefined });
  response.setHeader('connection', 'close');
  response.end(JSON.stringify({ pid: process.pid, cached }));
});
channel.onStop(async () => {
  if (process.env.TEST_HANG_ON_STOP === '1') await new Promise(() => undefined);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  logger.flush();
});
server.listen(Number(process.env.TEST_PORT), '127.0.0.1', () => channel.reportReady());
