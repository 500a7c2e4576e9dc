// Spec §6.4 across a strong-mode cluster of two real `svc serve` processes: a request asked at A for a
// key B owns is one trace. A's `svc.peer_fetch` span is the parent of B's listener span (the peer
// request carries A's traceparent), and B's origin fetch carries B's origin span to the origin.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvcCluster, CLUSTER_TOKEN, type SvcCluster, type ClusterNodeProcess } from '../support/svc-cluster.js';
import { fetchRaw, header } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

const SITE = 'shop.example';

async function ownerOf(asker: ClusterNodeProcess, path: string): Promise<string> {
  const answer = await fetchRaw(`${asker.adminUrl}/v1/stats?url=${encodeURIComponent(`http://${SITE}${path}`)}`, {
    headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
  });
  return (JSON.parse(answer.body) as { ring: { owner: string } }).ring.owner;
}

describe('tracing through a peer fetch', () => {
  let origin: TestOrigin;
  let receiver: OtlpReceiver;
  let cluster: SvcCluster;

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `${request.url}` }));
    receiver = await startOtlpReceiver();
    cluster = await startSvcCluster({
      names: ['a', 'b'],
      mode: 'strong',
      originUrl: origin.url,
      extraConfig: [`tracing: { endpoint: "${receiver.endpoint}", sampling_rate: 1 }`],
    });
  });
  after(async () => {
    await cluster?.close();
    await receiver?.close();
    await origin?.close();
  });

  test("A's peer fetch is the parent of B's request, and the origin sees B's origin span", async () => {
    const [a] = cluster.nodes as [ClusterNodeProcess];
    let path = '';
    for (let i = 0; i < 200 && path === ''; i++) if ((await ownerOf(a, `/traced-${i}`)) === 'b') path = `/traced-${i}`;
    assert.notEqual(path, '', 'a key B owns');
    const answer = await fetchRaw(`${a.dataUrl}${path}`, { headers: { host: SITE } });
    assert.equal(answer.status, 200);

    const onNode = (spans: ReceivedSpan[], node: string, name: string): ReceivedSpan | undefined =>
      spans.find((s) => s.name === name && s.resource['service.instance.id'] === node && (name !== 'svc.listener.http' || s.attributes['url.path'] === path));
    const spans = await receiver.waitFor((all) => {
      const asked = onNode(all, 'a', 'svc.listener.http');
      if (!asked) return false;
      const trace = all.filter((s) => s.traceId === asked.traceId);
      return trace.some((s) => s.name === 'svc.origin') && trace.some((s) => s.name === 'svc.peer_fetch') && trace.filter((s) => s.name === 'svc.listener.http').length === 2;
    }, 20_000);
    const aListener = onNode(spans, 'a', 'svc.listener.http')!;
    const trace = spans.filter((s) => s.traceId === aListener.traceId);
    const named = (node: string, name: string): ReceivedSpan => {
      const found = trace.find((s) => s.name === name && s.resource['service.instance.id'] === node);
      assert.ok(found, `${name} on ${node}`);
      return found;
    };
    const aCache = named('a', 'svc.cache');
    const peerFetch = named('a', 'svc.peer_fetch');
    const bListener = named('b', 'svc.listener.http');
    const bCache = named('b', 'svc.cache');
    const bOrigin = named('b', 'svc.origin');
    assert.equal(named('a', 'svc.pipeline').parentSpanId, aListener.spanId);
    assert.equal(peerFetch.parentSpanId, aCache.spanId);
    assert.equal(peerFetch.attributes['svc.peer.node'], 'b');
    assert.equal(peerFetch.attributes['http.response.status_code'], 200);
    assert.equal(bListener.parentSpanId, peerFetch.spanId, "B continues A's trace under the peer fetch");
    assert.equal(bOrigin.parentSpanId, bCache.spanId);
    assert.equal(aCache.attributes['svc.cache.source'], 'peer');
    assert.equal(bCache.attributes['svc.cache.key_hash'], aCache.attributes['svc.cache.key_hash'], 'one key, one hash on both nodes');
    assert.equal(trace.filter((s) => s.name === 'svc.origin' && s.resource['service.instance.id'] === 'a').length, 0, 'A did not go to the origin');

    const seen = origin.requests.find((r) => r.url === path)!;
    assert.equal(seen.headers.traceparent, `00-${aListener.traceId}-${bOrigin.spanId}-01`);
    assert.equal(header(answer, 'x-cache'), 'MISS');
  });
});
