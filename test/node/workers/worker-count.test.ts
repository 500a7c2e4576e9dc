// How many data-plane workers `svc serve` runs for a configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { workerCount } from '../../../src/node/workers/worker-count.js';

test('workers: the configured number, else one per core, else 1 beside what workers do not share', () => {
  assert.equal(workerCount({ workers: 3, warm: undefined, cluster: undefined }), 3);
  assert.equal(workerCount({ workers: undefined, warm: undefined, cluster: undefined }), availableParallelism());
  const warm = { path: '/var/cache/svc', max_bytes: 1, write_queue_length: 1 } as never;
  assert.equal(workerCount({ workers: undefined, warm, cluster: undefined }), 1);
  assert.equal(workerCount({ workers: undefined, warm: undefined, cluster: { mode: 'strong' } as never }), 1);
  assert.equal(workerCount({ workers: undefined, warm: undefined, cluster: { mode: 'eventual' } as never }), availableParallelism());
});
