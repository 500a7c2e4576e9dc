// The pin only helps while what it keeps is one of nextTick's own objects: if a Node release builds
// ticks differently, this fails and the workaround in src/node/tick-object-shape.ts needs another look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pinTickObjectShape } from '../../src/node/tick-object-shape.js';

test('the object kept has the shape of a nextTick object: two async id symbols, callback and args', async () => {
  const kept = await pinTickObjectShape();
  assert.deepEqual(Object.keys(kept), ['callback', 'args']);
  const symbols = Object.getOwnPropertySymbols(kept).map((symbol) => symbol.description);
  assert.deepEqual(symbols, ['async_id_symbol', 'trigger_async_id_symbol']);
  assert.equal(typeof (kept as { callback?: unknown }).callback, 'function');
  assert.equal(await pinTickObjectShape(), kept, 'pinned once per process');
});
