// How many data-plane workers a node runs. Absent from the configuration, one per core the process
// may use (os.availableParallelism, which honours CPU affinity): that is what lets one node use the
// machine as Varnish and nginx do.
import { availableParallelism } from 'node:os';
import type { Config } from '../../config/index.js';

export function workerCount(config: Pick<Config, 'workers'>): number {
  return config.workers ?? availableParallelism();
}
