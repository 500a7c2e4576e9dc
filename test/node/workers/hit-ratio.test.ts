// Each hot object is held once per node (issue 27 item 1): a Zipf stream replayed through a real node
// of several threads over HTTP hits as often as it does through one hot tier of hot_max_bytes in this
// process, and clearly more than through two halves of it (what a node of two caches would do).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSvc } from '../../support/svc-harness.js';
import { seededRandom } from '../../../bench/support/median-interval.js';
import { zipfStream } from '../../../bench/support/zipf.js';
import { entriesLike, hotTiers, replayInProcess, replayThroughNode, startAssetOrigin } from '../../../bench/support/hit-ratio-replay.js';

const KEYS = 5_000;
const REQUESTS = 20_000;
/** Room for about a tenth of the keys (records of about 1.3 KiB). */
const HOT_MAX_BYTES = 700_000;

test('a Zipf stream through a node of several threads hits as one hot tier does, not as halves', async (t) => {
  const origin = await startAssetOrigin();
  const svc = await startSvc([origin.url], { config: { hot_max_bytes: HOT_MAX_BYTES } });
  try {
    assert.ok(svc.node.workers > 1, 'several threads');
    const stream = zipfStream(REQUESTS, KEYS, 1.0, seededRandom(27));
    const throughNode = await replayThroughNode(svc.dataUrl, stream, 8, 4);
    const keyOf = (rank: number): string => `${svc.dataUrl}/asset/${rank}`;
    const sample = svc.node.cache.hot.peek(keyOf(stream[0]!))[0] ?? [...svc.node.cache.hot.entries()][0]!;
    const entryOf = entriesLike(sample, keyOf);
    const oneTier = replayInProcess(stream, hotTiers(HOT_MAX_BYTES, 1), entryOf);
    const pick = seededRandom(7);
    const halves = replayInProcess(stream, hotTiers(HOT_MAX_BYTES, 2), entryOf, () => (pick() < 0.5 ? 0 : 1));
    const percent = (ratio: number): string => `${(ratio * 100).toFixed(1)}%`;
    t.diagnostic(`through the node ${percent(throughNode)}, one tier ${percent(oneTier)}, two halves ${percent(halves)}`);
    assert.ok(Math.abs(throughNode - oneTier) <= 0.01, `the node hits ${percent(throughNode)}, one tier ${percent(oneTier)}`);
    assert.ok(throughNode - halves >= 0.03, `the node hits ${percent(throughNode)}, barely above two halves (${percent(halves)})`);
  } finally {
    await svc.stop();
    await origin.close();
  }
});
