// How many data-plane workers `svc serve` runs for a configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { workerCount } from '../../../src/node/workers/worker-count.js';

test('workers: the configured number, else one per core', () => {
  assert.equal(workerCount({ workers: 3 }), 3);
  assert.equal(workerCount({ workers: 1 }), 1);
  assert.equal(workerCount({ workers: undefined }), availableParallelism());
});
