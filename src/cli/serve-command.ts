// `svc serve --config <file> [--log-format json|pretty]`: runs a node until SIGINT or SIGTERM, then
// stops it cleanly (listeners closed, warm tier flushed), and the process ends within
// STOP_DEADLINE_MS of the signal whatever a step of the stop waits for (docs/operations.md
// "Stopping"). A signal that comes while the node is still starting ends the process at once (the
// signal's default action): nothing was served yet, and the warm tier and its lock survive it as they
// survive kill -9. SIGHUP reloads the configuration file without a restart (docs/operations.md
// "Reload"); what cannot change while running is refused and the running configuration stays. Errors
// nothing else caught go to the last resort (src/node/last-resort.ts) while the node runs.
import { rename, writeFile } from 'node:fs/promises';
import { defineCommand } from 'citty';
import { loadConfigFile } from '../config/index.js';
import { createLogger, LogOutput, type LogFormat } from '../observe/logger.js';
import { startNode } from '../node/svc-node.js';
import { STOP_GRACE_MS } from '../node/listeners.js';
import type { ReloadStep } from '../node/reload/config-reloader.js';
import { installLastResort } from '../node/last-resort.js';
import { Successor } from '../node/upgrade-successor.js';
import { CliError } from './cli-error.js';

const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/**
 * How long after SIGINT or SIGTERM the process exits even if the stop has not finished (status 1):
 * the grace busy requests get, then 4 s to close the rest. A supervisor (systemd, Kubernetes) can
 * count on it, and a second signal ends the process at once.
 */
export const STOP_DEADLINE_MS = STOP_GRACE_MS + 4_000;

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
  meta: { name: 'serve', description: 'run the service (SIGHUP reloads the configuration, SIGUSR2 upgrades it without downtime, SIGINT or SIGTERM stops it)' },
  args: {
    config: { type: 'string', description: 'configuration file (YAML or JSON)', required: true },
    'log-format': { type: 'string', description: 'json or pretty; overrides log.format of the configuration (default json)' },
    'pid-file': { type: 'string', description: 'file to write the pid of the process that serves to (a supervisor follows it through an upgrade)' },
  },
  async run({ args }) {
    const flagFormat = args['log-format'] as LogFormat | undefined;
    if (flagFormat !== undefined && !LOG_FORMATS.includes(flagFormat)) throw new CliError(`--log-format must be json or pretty, got "${flagFormat}"`, 2);
    // Taken before anything else: SIGHUP's and SIGUSR2's default actions would end the process,
    // during startup too. An upgrade asked for while the node starts is not made (and logged once it serves).
    let hangups = 0;
    let upgradesWhileStarting = 0;
    const countHangup = (): void => void hangups++;
    const countUpgrade = (): void => void upgradesWhileStarting++;
    process.on('SIGHUP', countHangup);
    process.on('SIGUSR2', countUpgrade);
    const successor = Successor.ofThisProcess();
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
      successor,
    });
    // Written before a predecessor hears that this process serves: it exits after, and a supervisor
    // that follows the file (systemd's PIDFile) then finds this pid in it.
    if (args['pid-file'] !== undefined) await writePidFile(args['pid-file']);
    if (successor) {
      logger.info({ predecessor: successor.from }, 'upgrade: took over from the predecessor');
      successor.serving();
    }
    const removeLastResort = installLastResort({ logger, counter: node.metrics.edge.uncaughtErrors, shutdown: () => node.stop() });
    // The node logs each reload's outcome; a failure is reported there and the node serves on.
    const reload = (): void => {
      logger.info({ signal: 'SIGHUP', file: args.config }, 'reloading the configuration');
      node.reload().catch(() => undefined);
    };
    process.off('SIGHUP', countHangup);
    process.on('SIGHUP', reload);
    if (hangups > 0) reload();
    let stopping = false;
    let requestStop: (signal: NodeJS.Signals, why: 'signal' | 'upgrade') => void = () => undefined;
    // The same command again: the build on disk now is what the successor runs.
    const upgrade = (): void => {
      if (stopping) return;
      void node.upgrade([process.execPath, ...process.execArgv, ...process.argv.slice(1)]).then((outcome) => {
        if (outcome === 'handed-over') requestStop('SIGUSR2', 'upgrade');
      });
    };
    // Added before the start's listener goes: with none, the signal's default action ends the process.
    process.on('SIGUSR2', upgrade);
    process.off('SIGUSR2', countUpgrade);
    if (upgradesWhileStarting > 0) logger.warn({ signal: 'SIGUSR2' }, 'upgrade: asked for while the node was starting: not made; send the signal again');
    let stopped = false;
    const reason = await new Promise<'signal' | 'upgrade'>((resolve) => {
      requestStop = (signal, why) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'stopping');
        // /readyz answers 503 from now on: the data-plane listener is about to close.
        node.readiness.markDraining();
        // Unref'd: it fires only when something keeps the process alive, a stop step or a handle left open.
        setTimeout(() => {
          logger.fatal({ signal, deadline_ms: STOP_DEADLINE_MS }, stopped ? 'stopped, but something kept the process alive: exiting' : 'the node did not stop in time: exiting');
          logger.flush();
          process.exit(1);
        }, STOP_DEADLINE_MS).unref();
        resolve(why);
      };
      process.once('SIGINT', (signal) => requestStop(signal, 'signal'));
      process.once('SIGTERM', (signal) => requestStop(signal, 'signal'));
    });
    process.off('SIGHUP', reload);
    await node.stop();
    stopped = true;
    if (reason === 'upgrade') logger.info('upgrade: handed over to the successor: this process exits');
    removeLastResort();
    logger.flush();
  },
});

/** Replaces the file whole (a temporary file renamed over it): a reader never sees it half written. */
async function writePidFile(path: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${process.pid}\n`);
  await rename(temporary, path);
}
