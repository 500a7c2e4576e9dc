// How many data-plane workers a node runs. Absent from the configuration, one per core the process
// may use (os.availableParallelism, which honours CPU affinity): that is what lets one node use the
// machine as Varnish and nginx do. A node in a strong-mode cluster runs one process, since several
// workers do not share its ring yet (the configuration refuses more there).
import { availableParallelism } from 'node:os';
import type { Config } from '../../config/index.js';

export function workerCount(config: Pick<Config, 'workers' | 'cluster'>): number {
  if (config.workers !== undefined) return config.workers;
  if (config.cluster?.mode === 'strong') return 1;
  return availableParallelism();
}
