// `svc serve --config <file> [--log-format json|pretty]`: runs a node until SIGINT or SIGTERM, then
// stops it cleanly (listeners closed, warm tier flushed).
import { defineCommand } from 'citty';
import { loadConfigFile } from '../config/index.js';
import { createLogger, type LogFormat } from '../observe/logger.js';
import { startNode } from '../node/svc-node.js';
import { CliError } from './cli-error.js';

const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'run the service' },
  args: {
    config: { type: 'string', description: 'configuration file (YAML or JSON)', required: true },
    'log-format': { type: 'string', description: 'json or pretty; overrides log.format of the configuration (default json)' },
  },
  async run({ args }) {
    const flagFormat = args['log-format'] as LogFormat | undefined;
    if (flagFormat !== undefined && !LOG_FORMATS.includes(flagFormat)) throw new CliError(`--log-format must be json or pretty, got "${flagFormat}"`, 2);
    const config = await loadConfigFile(args.config);
    const logger = createLogger({ format: flagFormat ?? config.log.format });
    const node = await startNode({ config, logger });
    await new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        logger.info({ signal }, 'stopping');
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await node.stop();
    logger.flush();
  },
});
