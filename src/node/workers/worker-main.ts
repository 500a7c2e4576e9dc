// A data-plane worker of `svc serve` (forked by the primary, data-plane-workers.ts): a node without
// an admin listener, a cluster member or CDN propagation, with its share of the hot tier, serving the
// data-plane port it shares with the other workers. It logs JSON lines on its standard output, which
// the primary relays whole, in the primary's log format.
// Usage (by the primary only): node worker-main.js <configuration file>
import { loadConfigFile } from '../../config/index.js';
import { createLogger, LogOutput } from '../../observe/logger.js';
import { startNode } from '../svc-node.js';
import { PrimaryChannel } from './primary-channel.js';
import { answerPrimaryCalls } from './worker-answers.js';
import { WORKER_SLOT_VARIABLE } from './worker-supervisor.js';

// First: a purge the primary sends while this worker starts is held, not lost.
const channel = PrimaryChannel.open();
const output = new LogOutput('json');
const logger = createLogger({ destination: output });
const configFile = process.argv[2]!;
try {
  const config = await loadConfigFile(configFile);
  const node = await startNode({ config, logger, configFile, role: 'worker' });
  answerPrimaryCalls(channel, node);
  channel.onStop(async () => {
    await node.stop();
    // The last access lines are still in the log's buffer: written before the worker exits.
    await new Promise<void>((resolve) => output.flush(() => resolve()));
  });
  channel.reportReady();
} catch (error) {
  logger.fatal({ err: error, worker: process.env[WORKER_SLOT_VARIABLE] }, 'data-plane worker could not start');
  channel.reportFailed(error instanceof Error ? error.message : String(error));
  // The primary sees the exit: a first start fails as a whole, a restart is tried again later.
  output.flush(() => process.exit(1));
}
