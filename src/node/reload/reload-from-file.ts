// A reload as the node runs it, whoever asks (SIGHUP through `svc serve`, `POST /v1/reload`): the
// configuration file is read and checked again as at startup, the reloader applies what changed,
// and the outcome is logged and counted in `svc_config_reloads_total{result}`. Reloads run one at a
// time, in the order they were asked for.
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import { ConfigError, loadConfigFile } from '../../config/index.js';
import type { Logger } from '../../observe/logger.js';
import { checkStartup } from '../startup-checks.js';
import { ReloadRefusedError } from '../../config/index.js';
import type { ConfigReloader, ReloadOutcome } from './config-reloader.js';

export interface FileReloadOptions {
  file: string;
  env: NodeJS.ProcessEnv;
  reloader: ConfigReloader;
  logger: Logger;
  registry: Registry;
  /** Resolves once the node has started: a reload asked for during startup waits for it. */
  started: Promise<void>;
  current: () => Config;
  replace: (config: Config) => void;
}

type Result = 'reloaded' | 'unchanged' | 'refused' | 'invalid';

export function createFileReload(options: FileReloadOptions): () => Promise<ReloadOutcome> {
  const reloads = new Counter({
    name: 'svc_config_reloads_total',
    help: 'Configuration reloads asked for (SIGHUP, POST /v1/reload), by result: reloaded, unchanged, refused (needs a restart), invalid.',
    labelNames: ['result'],
    registers: [options.registry],
  });
  for (const result of ['reloaded', 'unchanged', 'refused', 'invalid'] satisfies Result[]) reloads.inc({ result }, 0);
  const { logger } = options;

  async function reloadOnce(): Promise<ReloadOutcome> {
    await options.started;
    try {
      const next = await loadConfigFile(options.file);
      const problems = await checkStartup(next, options.env);
      if (problems.length > 0) throw new ConfigError(problems, options.file);
      const outcome = await options.reloader.reload(options.current(), next);
      options.replace(next);
      reloads.inc({ result: outcome.status });
      logger.info({ file: options.file, changed: outcome.changed }, outcome.status === 'reloaded' ? 'configuration reloaded' : 'configuration unchanged');
      return outcome;
    } catch (error) {
      if (error instanceof ConfigError) {
        reloads.inc({ result: 'invalid' });
        logger.error({ file: options.file, issues: error.issues }, 'configuration not reloaded: the file is invalid, the running configuration stays');
      } else if (error instanceof ReloadRefusedError) {
        reloads.inc({ result: 'refused' });
        logger.error({ file: options.file, reasons: error.reasons }, 'configuration not reloaded: a change needs a restart, the running configuration stays');
      } else {
        logger.error({ err: error, file: options.file }, 'configuration reload failed');
      }
      throw error;
    }
  }

  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const run = queue.then(reloadOnce, reloadOnce);
    queue = run.catch(() => undefined);
    return run;
  };
}
