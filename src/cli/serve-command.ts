// `svc serve --config <file> [--log-format json|pretty]`: runs a node until SIGINT or SIGTERM, then
// stops it cleanly (listeners closed, warm tier flushed). Errors nothing else caught go to the last
// resort (src/node/last-resort.ts) while the node runs.
import { defineCommand } from 'citty';
import { loadConfigFile } from '../config/index.js';
import { createLogger, type LogFormat } from '../observe/logger.js';
import { startNode } from '../node/svc-node.js';
import { installLastResort } from '../node/last-resort.js';
import { CliError } from './cli-error.js';

const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'run the service' },
  args: {
    config: { type: 'string', description: 'configuration file (YAML or JSON)', required: true },
    'log-format': { type: 'string', description: 'json (default) or pretty', default: 'json' },
  },
  async run({ args }) {
    const format = args['log-format'] as LogFormat;
    if (!LOG_FORMATS.includes(format)) throw new CliError(`--log-format must be json or pretty, got "${format}"`, 2);
    const config = await loadConfigFile(args.config);
    const logger = createLogger({ format });
    const node = await startNode({ config, logger });
    const removeLastResort = installLastResort({ logger, counter: node.metrics.edge.uncaughtErrors, shutdown: () => node.stop() });
    await new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        logger.info({ signal }, 'stopping');
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await node.stop();
    removeLastResort();
    logger.flush();
  },
});
