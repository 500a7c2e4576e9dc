// A data-plane worker thread of a node (started by workers/worker-supervisor.ts through
// worker-main.ts): it opens its channel
// to the main thread first, so that nothing sent while it starts is lost, builds its node
// (roles/worker-node.ts) and answers the main thread's calls. It logs JSON lines on its own standard
// output, which the main thread relays whole, in the node's log format.
import { workerData } from 'node:worker_threads';
import { createLogger, LogOutput } from '../../observe/logger.js';
import { startWorkerNode } from '../roles/worker-node.js';
import { MainChannel } from './main-channel.js';
import { answerMainCalls } from './worker-answers.js';
import type { WorkerStart } from './data-plane-workers.js';

const channel = MainChannel.open();
const start = workerData as WorkerStart & { slot: number };
const output = new LogOutput('json', process.stdout);
const logger = createLogger({ destination: output });
channel.onMalformed((issue) => logger.error({ issue }, 'the main thread sent a message that does not fit: dropped'));
try {
  const node = await startWorkerNode(start, channel, logger);
  answerMainCalls(channel, node, node.warm);
  channel.onStop(async () => {
    await node.stop();
    await new Promise<void>((resolve) => output.flush(() => resolve()));
  });
  channel.reportReady();
} catch (error) {
  logger.fatal({ err: error, worker: start.slot }, 'data-plane worker could not start');
  channel.reportFailed(error);
  output.flush(() => process.exit(1));
}
