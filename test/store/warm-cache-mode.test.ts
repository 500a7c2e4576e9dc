// Spec §1.4: cache contents are not kept across a change of cluster mode. The warm tier records the
// mode it was filled under and starts empty under another one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarmStore } from '../../src/store/warm/warm-store.js';
import { makeEntry } from './entry-fixture.js';

test('a warm directory filled under one cluster mode starts empty under the other, and is kept otherwise', async () => {
  const path = await mkdtemp(join(tmpdir(), 'svc-warm-mode-'));
  const open = (cacheMode: string | undefined) => openWarmStore({ path, maxBytes: 4 * 1024 * 1024, writeQueueLength: 100, cacheMode });
  try {
    const strong = await open('strong');
    strong.put(makeEntry({ key: 'http://example.com/a' }));
    await strong.flush();
    await strong.close();
    for (const [mode, entries, discarded] of [
      ['strong', 1, undefined],
      [undefined, 1, undefined],
      ['eventual', 0, 'strong'],
      ['eventual', 0, undefined],
    ] as const) {
      const store = await open(mode);
      assert.equal(store.entryCount, entries, `opened with ${mode}`);
      assert.equal(store.openReport.discardedMode, discarded, `opened with ${mode}`);
      await store.close();
    }
  } finally {
    await rm(path, { recursive: true, force: true });
  }
});
