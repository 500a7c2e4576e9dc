// How many data-plane workers `svc serve` runs for a configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { workerCount } from '../../../src/node/workers/worker-count.js';

test('workers: the configured number, else one per core, else 1 in a strong-mode cluster (whose ring workers do not share)', () => {
  assert.equal(workerCount({ workers: 3, cluster: undefined }), 3);
  assert.equal(workerCount({ workers: undefined, cluster: undefined }), availableParallelism());
  assert.equal(workerCount({ workers: undefined, cluster: { mode: 'strong' } as never }), 1);
  assert.equal(workerCount({ workers: undefined, cluster: { mode: 'eventual' } as never }), availableParallelism());
});
