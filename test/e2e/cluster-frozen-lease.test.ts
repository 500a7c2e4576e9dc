// Issue 28 items 1-3, with real `svc serve` processes on the defaults (strong mode, a data-plane
// thread per core, the default 8 s lease): a node frozen by SIGSTOP while the others purge what it
// holds serves none of it after SIGCONT, neither before it has caught up (it holds no lease when it
// wakes, and then holds back what it cached before) nor after; the purges answered only once the
// frozen node's lease had run out, and named it as missed.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, pathsOwnedBy, clusterAdmin, type SvcCluster } from '../support/svc-cluster.js';
import { fetchRaw, header } from '../support/http.js';
import { eventually } from '../support/eventually.js';

const SITE = 'shop.example';
const KEYS = 12;
/** How long reads go on after SIGCONT: past catch-up (a push-pull or a pull from a live peer). */
const READ_AFTER_WAKE_MS = 6_000;

describe('a node frozen while the others purge what it holds', () => {
  let origin: TestOrigin;
  let cluster: SvcCluster;
  let generation = 1;

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url} generation ${generation}` }));
    cluster = await startSvcCluster({ names: ['a', 'b', 'c'], mode: 'strong', originUrl: origin.url });
  });
  after(async () => {
    for (const node of cluster?.nodes ?? []) if (node.child?.exitCode === null) node.child.kill('SIGCONT');
    await cluster?.close();
    await origin?.close();
  });

  test('serves no purged object after SIGCONT, before or after catch-up; the purges name it as missed', async (t) => {
    const [a, , c] = cluster.nodes;
    const paths = await pathsOwnedBy(a!, 'c', 'frozen', KEYS, SITE);
    const read = (path: string) => fetchRaw(`${c!.dataUrl}${path}`, { headers: { host: SITE } });
    for (const path of paths) {
      await read(path);
      assert.equal(header(await read(path), 'x-cache'), 'HIT', `${path} is held by its owner c`);
    }

    c!.child!.kill('SIGSTOP');
    const frozenAt = performance.now();
    generation = 2;
    const answers = await Promise.all(paths.map((path) => clusterAdmin(a!, '/v1/purge', { url: `http://${SITE}${path}` })));
    const answeredMs = Math.round(performance.now() - frozenAt);
    t.diagnostic(`${KEYS} purges with c frozen answered ${answeredMs} ms after the freeze`);
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.json.peers_confirmed, 1, JSON.stringify(answer.json));
      assert.equal(answer.json.peers_missed, 1);
      assert.deepEqual(answer.json.peers_missed_names, ['c']);
    }

    c!.child!.kill('SIGCONT');
    const wokeAt = performance.now();
    let reads = 0;
    const stale: string[] = [];
    let hitsAfter = 0;
    while (performance.now() - wokeAt < READ_AFTER_WAKE_MS) {
      for (const path of paths) {
        const answer = await read(path);
        reads++;
        if (answer.body !== `${path} generation 2`) stale.push(`${Math.round(performance.now() - wokeAt)} ms: ${answer.body} (${header(answer, 'x-cache')})`);
        else if (header(answer, 'x-cache') === 'HIT') hitsAfter++;
      }
    }
    t.diagnostic(`${reads} reads at c in the ${READ_AFTER_WAKE_MS} ms after SIGCONT: ${stale.length} stale, ${hitsAfter} HITs of the new content`);
    assert.deepEqual(stale, []);
    assert.ok(hitsAfter > 0, 'once caught up and leased again, c serves from its cache');
    const ready = await eventually('c ready again', async () => (await fetchRaw(`${c!.adminUrl}/readyz`)).status, (status) => status === 200);
    assert.equal(ready, 200);
  });
});
