// Issue 2 item 6: the unauthenticated operational endpoints of the admin listener.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw, header } from '../support/http.js';

describe('admin health endpoints', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin((request) =>
      request.url === '/slow'
        ? { headers: { 'cache-control': 'no-store' }, body: 'slow', delayMs: 400 }
        : { headers: { 'cache-control': 'max-age=60' }, body: 'fine' },
    );
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('/healthz answers ok', async () => {
    const answer = await fetchRaw(`${svc.adminUrl}/healthz`);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { status: 'ok' });
  });

  test('/version gives the package version, and a stamped commit and date', async () => {
    const answer = JSON.parse((await fetchRaw(`${svc.adminUrl}/version`)).body) as Record<string, string>;
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(answer.version, pkg.version);
    assert.match(answer.commit!, /^([0-9a-f]{40}|unknown)$/);
    assert.ok(!Number.isNaN(Date.parse(answer.date!)));
  });

  test('unknown admin paths are 404 and wrong methods 405 with Allow, in the JSON error shape', async () => {
    const missing = await fetchRaw(`${svc.adminUrl}/nope`);
    assert.equal(missing.status, 404);
    assert.equal((JSON.parse(missing.body) as { error: { code: string } }).error.code, 'not_found');
    const wrong = await fetchRaw(`${svc.adminUrl}/healthz`, { method: 'POST' });
    assert.equal(wrong.status, 405);
    assert.equal(header(wrong, 'allow'), 'GET');
    assert.equal((JSON.parse(wrong.body) as { error: { code: string } }).error.code, 'method_not_allowed');
  });

  test('/metrics has the traffic metrics with exactly the spec labels', async () => {
    await fetchRaw(`${svc.dataUrl}/metered`);
    await fetchRaw(`${svc.dataUrl}/metered`);
    const text = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
    assert.match(text, /^svc_requests_total\{method="GET",status="200",cache_result="MISS",source="origin",route="main"\} 1$/m);
    assert.match(text, /^svc_requests_total\{method="GET",status="200",cache_result="HIT",source="hot",route="main"\} \d+$/m);
    assert.match(text, /^svc_request_duration_seconds_bucket\{le="0\.001",method="GET",status="200",cache_result="HIT",source="hot",route="main"\} \d+$/m);
    assert.match(text, /^svc_response_bytes_total\{method="GET",cache_result="HIT",source="hot",route="main"\} \d+$/m);
    assert.match(text, /^process_cpu_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
    assert.match(text, /^svc_hot_store_entries \d+$/m);
  });

  test('/readyz is ready with detail, and drain turns it to 503 once in-flight requests finish', async () => {
    const ready = await fetchRaw(`${svc.adminUrl}/readyz?detail=1`);
    assert.equal(ready.status, 200);
    const detail = JSON.parse(ready.body) as { status: string; conditions: { name: string; ready: boolean }[] };
    assert.equal(detail.status, 'ready');
    assert.ok(detail.conditions.some((c) => c.name === 'data_listener_bound' && c.ready));

    const slow = fetchRaw(`${svc.dataUrl}/slow`);
    await eventually('/slow at the origin', () => origin.requests.some((request) => request.url === '/slow'), (asked) => asked);
    let drainedAt = 0;
    const drain = fetchRaw(`${svc.adminUrl}/drain`).then((answer) => {
      drainedAt = Date.now();
      return answer;
    });
    // The origin holds /slow 400 ms: the drain begins while it is in flight.
    const during = await eventually('the drain begun', () => fetchRaw(`${svc.adminUrl}/readyz`), (answer) => answer.status === 503);
    assert.equal((JSON.parse(during.body) as { status: string }).status, 'draining');
    const slowAnswer = await slow;
    const slowDoneAt = Date.now();
    const drained = await drain;
    assert.equal(slowAnswer.status, 200);
    assert.deepEqual(JSON.parse(drained.body), { status: 'drained' });
    assert.ok(drainedAt >= slowDoneAt - 5, 'drain answered before the in-flight request finished');
    const after = await fetchRaw(`${svc.adminUrl}/readyz`);
    assert.equal(after.status, 503);
  });
});
