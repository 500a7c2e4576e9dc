// The pin only helps while what it keeps is one of nextTick's own objects: if a Node release builds
// ticks differently, this fails and the workaround in src/node/tick-object-shape.ts needs another look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pinTickObjectShape } from '../../src/node/tick-object-shape.js';

test('the object kept is a nextTick object: its callback and its async id', async () => {
  const kept = await pinTickObjectShape();
  assert.equal(typeof (kept as { callback?: unknown }).callback, 'function');
  const symbols = Object.getOwnPropertySymbols(kept).map((symbol) => symbol.description);
  assert.ok(symbols.includes('async_id_symbol'), `own symbols: ${symbols.join(', ')}`);
  assert.equal(await pinTickObjectShape(), kept, 'pinned once per process');
});
