// Strong mode's peer fetch as a fill (issue 15 item 3), on two real nodes in this process: a body
// crosses from the owner in parts, concurrent requests at the asking node share one peer fetch, and an
// owner refuses an object larger than its max_object_bytes, the asker then going to the origin and
// saying so in svc_peer_fetch_refused_total.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { keyOfRequest } from '../../src/edge/client-request.js';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';
import { metricValue } from '../support/caching-fixture.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { CLUSTER_SECRET } from '../support/svc-cluster.js';
import { PEER_FETCH_CHANNEL } from '../../src/clustering/peer-fetcher.js';
import { encodePeerFetchRequest } from '../../src/clustering/peer-fetch-wire.js';

const SITE = 'shop.example';
const MAX_OBJECT_BYTES = 8 * 1024 * 1024;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

function patterned(bytes: number, seed: number): Buffer {
  const body = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) body[i] = (i * 31 + seed + (i >> 10)) & 0xff;
  return body;
}

const objects = new Map<string, Buffer>([
  ['/parts', patterned(5 * 1024 * 1024 + 123, 1)],
  ['/too-large', patterned(MAX_OBJECT_BYTES + 1, 2)],
  ['/hops', patterned(1024, 3)],
]);

describe('peer fetch between two nodes', { timeout: 60_000 }, () => {
  let origin: TestOrigin;
  let a: SvcUnderTest;
  let b: SvcUnderTest;
  const nodeConfig = async (name: string, join: string[]) => ({
    config: { hop_limit: 2, max_object_bytes: MAX_OBJECT_BYTES, cluster: { mode: 'strong', node_name: name, secret: CLUSTER_SECRET, bind: `127.0.0.1:${await freePort()}`, join } },
  });
  /** A path of `prefix` whose key node `owner` owns. */
  const ownedBy = (owner: string, prefix: string): string => {
    for (let i = 0; i < 1000; i++) {
      const path = `${prefix}?v=${i}`;
      if (a.node.cluster!.ownerOf(keyOfRequest('http', SITE, path)!) === owner) return path;
    }
    throw new Error(`no path owned by ${owner}`);
  };
  const ownedByB = (prefix: string): string => ownedBy('b', prefix);
  const get = (node: SvcUnderTest, path: string) => fetchRaw(`${node.dataUrl}${path}`, { headers: { host: SITE } });
  const metric = async (node: SvcUnderTest, sample: string): Promise<number> => metricValue((await fetchRaw(`${node.adminUrl}/metrics`)).body, sample);
  const peerFetches = async (node: SvcUnderTest): Promise<number> =>
    (await metric(node, 'svc_peer_fetch_hits_total')) + (await metric(node, 'svc_peer_fetch_misses_total'));
  const originRequests = (path: string): number => origin.requests.filter((request) => request.url === path).length;

  before(async () => {
    origin = await startTestOrigin((request) => {
      const path = (request.url ?? '/').split('?')[0]!;
      const body = objects.get(path);
      if (body === undefined) return { status: 404, headers: { 'cache-control': 'no-store' }, body: 'none' };
      // A slow head, so that concurrent requests find the fill busy.
      return { headers: { 'cache-control': 'max-age=600' }, body, delayMs: 200 };
    });
    a = await startSvc([origin.url], await nodeConfig('a', []));
    b = await startSvc([origin.url], await nodeConfig('b', [a.node.cluster!.member.localMember.address]));
    await eventually(
      'both nodes to see each other',
      () => [a, b].map((node) => node.node.cluster!.peers().filter((peer) => peer.state === 'alive').length),
      (alive) => alive.every((count) => count === 2),
      { timeoutMs: 20_000, everyMs: 50 },
    );
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
    await origin?.close();
  });

  test('ten concurrent requests at the asker share one peer fetch; the body crosses in parts, whole', async () => {
    const path = ownedByB('/parts');
    const fetchesBefore = await peerFetches(a);
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(a, path)));
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(sha256(answer.raw), sha256(objects.get('/parts')!));
    }
    assert.equal((await peerFetches(a)) - fetchesBefore, 1, 'one peer fetch for the ten requests');
    assert.equal(originRequests(path), 1);
    const again = await get(a, path);
    assert.equal(header(again, 'x-cache'), 'HIT');
    assert.equal(sha256(again.raw), sha256(objects.get('/parts')!));
    assert.equal(await metric(a, 'svc_requests_total{method="GET",status="200",cache_result="HIT",source="peer",route="main"}') > 0, true);
  });

  test('an object above the owner\'s max_object_bytes is refused; the asker goes to the origin and says so', async () => {
    const path = ownedByB('/too-large');
    const fetchesBefore = await peerFetches(a);
    const first = await get(a, path);
    assert.equal(sha256(first.raw), sha256(objects.get('/too-large')!));
    assert.equal(await metric(a, 'svc_peer_fetch_refused_total{reason="too_large"}'), 1);
    assert.equal((await peerFetches(a)) - fetchesBefore, 1);
    // For a while the asker does not ask the owner again: straight to the origin.
    const second = await get(a, path);
    assert.equal(sha256(second.raw), sha256(objects.get('/too-large')!));
    assert.equal(header(second, 'x-cache'), 'MISS');
    assert.equal((await peerFetches(a)) - fetchesBefore, 1);
    assert.equal(await metric(a, 'svc_peer_fetch_refused_total{reason="too_large"}'), 1);
  });

  test('a peer fetch that reached hop_limit at a node not owning its key is answered from the origin there, and counted', async () => {
    // a asks b for a key a owns, as a node whose view of the ring differs would. hop_limit is 2: with
    // one hop made b passes it on to the owner; with two it answers itself.
    const path = ownedBy('a', '/hops');
    const askB = (hops: number) =>
      a.node.cluster!.member.request('b', PEER_FETCH_CHANNEL, encodePeerFetchRequest({ method: 'GET', path, headers: ['host', SITE], hops }), { timeoutMs: 10_000 });
    const limitHits = () => metric(b, 'svc_peer_fetch_hop_limit_hits_total');
    const entriesAtB = b.node.cache.hot.entryCount;
    await askB(1);
    assert.equal(await limitHits(), 0, 'below hop_limit b forwards to the owner');
    assert.equal(b.node.cache.hot.entryCount, entriesAtB, 'b did not fill it');
    await askB(2);
    assert.equal(await limitHits(), 1, 'at hop_limit b answers and counts it');
    assert.equal(b.node.cache.hot.entryCount, entriesAtB + 1, 'b filled it from the origin');
  });
});
