// svc's data plane served by N worker processes under the worker supervisor: the prototype the
// scaling benchmark measures, and the shape `svc serve` takes once the workers are wired in (the
// primary supervises, each worker runs a node). Each worker here is a whole node with an admin
// listener of its own (admin port + 1 + slot); nothing is shared between them yet.
// Usage: node svc-workers.js <config file> <workers> <round-robin|os>
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { loadConfigFile, splitHostPort } from '../../src/config/index.js';
import { startNode } from '../../src/node/svc-node.js';
import { PrimaryChannel } from '../../src/node/workers/primary-channel.js';
import { answerMetricsCalls } from '../../src/node/workers/worker-metrics.js';
import { WORKER_SLOT_VARIABLE, WorkerSupervisor, type ConnectionDistribution } from '../../src/node/workers/worker-supervisor.js';
import { createLogger, LogOutput } from '../../src/observe/logger.js';

const [configFile, workers, distribution] = process.argv.slice(2) as [string, string, ConnectionDistribution];

if (cluster.isPrimary) {
  const output = new LogOutput();
  const supervisor = await WorkerSupervisor.start({
    workers: Number(workers),
    exec: fileURLToPath(import.meta.url),
    args: [configFile, workers, distribution],
    logger: createLogger({ destination: output }),
    output,
    distribution,
  });
  process.once('SIGTERM', () => void supervisor.stop().then(() => process.exit(0)));
} else {
  const channel = PrimaryChannel.open();
  const config = await loadConfigFile(configFile);
  const slot = Number(process.env[WORKER_SLOT_VARIABLE]);
  const admin = splitHostPort(config.admin.listen);
  const node = await startNode({ config: { ...config, admin: { ...config.admin, listen: `${admin.host}:${admin.port + 1 + slot}` } }, logger: createLogger() });
  answerMetricsCalls(channel, node.metrics.registry);
  channel.onStop(() => node.stop());
  channel.reportReady();
}
