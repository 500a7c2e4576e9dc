// Issue 2 item 7: one JSON access-log line per request with exactly the spec §2.4 fields; 200s
// sampled 1 in 100, every other status always.
import { eventually } from '../support/eventually.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestOrigin } from '../support/test-origin.js';
import { startSvc } from '../support/svc-harness.js';
import { fetchRaw } from '../support/http.js';
import { loggedPath } from '../../src/observe/access-log.js';

const FIELDS = ['bytes_out', 'cache_status', 'dur_ms', 'host', 'level', 'method', 'msg', 'path', 'proto', 'remote', 'route', 'status', 'time'];

test('access log records carry exactly the spec fields and sample 200s 1 in 100', async () => {
  const origin = await startTestOrigin((request) =>
    request.url === '/missing' ? { status: 404, headers: { 'cache-control': 'no-store' }, body: 'no' } : { headers: { 'cache-control': 'max-age=60' }, body: 'yes' },
  );
  const svc = await startSvc([origin.url]);
  try {
    for (let i = 0; i < 150; i++) await fetchRaw(`${svc.dataUrl}/ok`);
    for (let i = 0; i < 3; i++) await fetchRaw(`${svc.dataUrl}/missing`);
    // The node's threads log in batches: the lines come a moment after the answers.
    const logged = (): Record<string, unknown>[] => svc.logs.lines.filter((line) => line.msg === 'access');
    const access = await eventually('five access lines', logged, (lines) => lines.length >= 5);
    // In the order they were logged, whichever thread's batch came first.
    access.sort((a, b) => String(a.time).localeCompare(String(b.time)));
    const ok = access.filter((line) => line.status === 200);
    const notFound = access.filter((line) => line.status === 404);
    assert.equal(ok.length, 2, '150 answers of 200: two of them are logged, 1 in 100');
    assert.equal(notFound.length, 3);
    const record = notFound[0]!;
    assert.deepEqual(Object.keys(record).sort(), FIELDS);
    assert.equal(record.level, 'info');
    assert.equal(record.method, 'GET');
    assert.equal(record.path, '/missing');
    assert.equal(record.proto, 'HTTP/1.1');
    assert.equal(record.cache_status, 'BYPASS');
    assert.equal(record.route, 'main');
    assert.equal(record.bytes_out, 2);
    assert.equal(typeof record.dur_ms, 'number');
    assert.ok(Number.isInteger(record.dur_ms));
    assert.match(String(record.remote), /^127\.0\.0\.1:\d+$/);
    assert.match(String(record.time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Which two of the 150 are sampled is not fixed: a MISS is counted once its fill has decided
    // whether to store, by when later HITs may have been counted before it.
    for (const line of ok) assert.ok(['MISS', 'HIT'].includes(String(line.cache_status)), `a 200 of /ok is a MISS or a HIT, got ${String(line.cache_status)}`);
    assert.ok(!svc.logs.text.some((line) => line.includes('test-admin-token-0123456789')), 'the admin token is never logged');
  } finally {
    await svc.stop();
    await origin.close();
  }
});

test('query strings reach the access log only as log.access_query says: omit (default), hash or full', async () => {
  const origin = await startTestOrigin(() => ({ status: 404, headers: { 'cache-control': 'no-store' }, body: 'no' }));
  const paths = async (mode: string | undefined): Promise<string[]> => {
    const svc = await startSvc([origin.url], mode === undefined ? {} : { config: { log: { access_query: mode } } });
    try {
      for (const target of ['/reset?token=s3cret-value', '/reset?token=s3cret-value', '/reset?token=other', '/plain']) {
        await fetchRaw(`${svc.dataUrl}${target}`);
      }
      // Each thread writes its lines in batches: they arrive after the answers, in any order.
      const logged = (): string[] => svc.logs.lines.filter((line) => line.msg === 'access').map((line) => String(line.path));
      return (await eventually('four access lines', logged, (lines) => lines.length === 4)).sort();
    } finally {
      await svc.stop();
    }
  };
  try {
    assert.deepEqual(await paths(undefined), ['/plain', '/reset', '/reset', '/reset']);
    assert.deepEqual(await paths('full'), ['/plain', '/reset?token=other', '/reset?token=s3cret-value', '/reset?token=s3cret-value']);
    const hashed = await paths('hash');
    assert.equal(hashed[0], '/plain');
    for (const path of hashed.slice(1)) assert.match(path, /^\/reset\?hmac:[0-9a-f]{16}$/);
    const counts = [...new Set(hashed.slice(1))].map((path) => hashed.filter((each) => each === path).length).sort();
    assert.deepEqual(counts, [1, 2], 'equal queries give equal hashes within a run (whichever thread logged them), others differ');
    assert.equal(loggedPath('/empty?', 'hash', Buffer.alloc(32)), '/empty', 'an empty query is no query');
    const again = await paths('hash');
    assert.equal(again.filter((path) => hashed.includes(path) && path !== '/plain').length, 0, 'the key is drawn per run, so a hash cannot be looked up in a dictionary made elsewhere');
  } finally {
    await origin.close();
  }
});
