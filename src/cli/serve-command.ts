// `svc serve --config <file> [--log-format json|pretty]`: runs a node until SIGINT or SIGTERM, then
// stops it cleanly (listeners closed, warm tier flushed). SIGHUP reloads the configuration file
// without a restart (docs/operations.md "Reload"); what cannot change while running is refused and
// the running configuration stays. Errors nothing else caught go to the last resort
// (src/node/last-resort.ts) while the node runs.
import { defineCommand } from 'citty';
import { loadConfigFile } from '../config/index.js';
import { createLogger, LogOutput, type LogFormat } from '../observe/logger.js';
import { startNode } from '../node/svc-node.js';
import type { ReloadStep } from '../node/reload/config-reloader.js';
import { installLastResort } from '../node/last-resort.js';
import { CliError } from './cli-error.js';

const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** `log.format` on reload: the output switches, unless --log-format fixed it for this run. */
function logFormatStep(output: LogOutput, flagFormat: LogFormat | undefined): ReloadStep {
  return {
    keys: ['log.format'],
    prepare: (next) => () => {
      if (flagFormat === undefined) output.setFormat(next.log.format);
    },
  };
}

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'run the service (SIGHUP reloads the configuration, SIGINT or SIGTERM stops it)' },
  args: {
    config: { type: 'string', description: 'configuration file (YAML or JSON)', required: true },
    'log-format': { type: 'string', description: 'json or pretty; overrides log.format of the configuration (default json)' },
  },
  async run({ args }) {
    const flagFormat = args['log-format'] as LogFormat | undefined;
    if (flagFormat !== undefined && !LOG_FORMATS.includes(flagFormat)) throw new CliError(`--log-format must be json or pretty, got "${flagFormat}"`, 2);
    // Taken before anything else: SIGHUP's default action would end the process, during startup too.
    let hangups = 0;
    const countHangup = (): void => void hangups++;
    process.on('SIGHUP', countHangup);
    const config = await loadConfigFile(args.config);
    const output = new LogOutput(flagFormat ?? config.log.format);
    const logger = createLogger({ destination: output });
    // The data-plane threads' log lines come out through `output` too, in its format.
    const node = await startNode({
      config,
      logger,
      configFile: args.config,
      reloadSteps: [logFormatStep(output, flagFormat)],
      workerOutput: output,
    });
    const removeLastResort = installLastResort({ logger, counter: node.metrics.edge.uncaughtErrors, shutdown: () => node.stop() });
    // The node logs each reload's outcome; a failure is reported there and the node serves on.
    const reload = (): void => {
      logger.info({ signal: 'SIGHUP', file: args.config }, 'reloading the configuration');
      node.reload().catch(() => undefined);
    };
    process.off('SIGHUP', countHangup);
    process.on('SIGHUP', reload);
    if (hangups > 0) reload();
    await new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        logger.info({ signal }, 'stopping');
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    process.off('SIGHUP', reload);
    await node.stop();
    removeLastResort();
    logger.flush();
  },
});
