// Issue 2 item 7: one JSON access-log line per request with exactly the spec §2.4 fields; 200s
// sampled 1 in 100, every other status always.
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
    await new Promise((resolve) => setTimeout(resolve, 50));
    const access = svc.logs.lines.filter((line) => line.msg === 'access');
    const ok = access.filter((line) => line.status === 200);
    const notFound = access.filter((line) => line.status === 404);
    assert.equal(ok.length, 2, '150 answers of 200: the 1st and the 101st are logged');
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
    assert.equal(ok[0]!.cache_status, 'MISS');
    assert.equal(ok[1]!.cache_status, 'HIT');
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
      await new Promise((resolve) => setTimeout(resolve, 50));
      return svc.logs.lines.filter((line) => line.msg === 'access').map((line) => String(line.path));
    } finally {
      await svc.stop();
    }
  };
  try {
    assert.deepEqual(await paths(undefined), ['/reset', '/reset', '/reset', '/plain']);
    assert.deepEqual(await paths('full'), ['/reset?token=s3cret-value', '/reset?token=s3cret-value', '/reset?token=other', '/plain']);
    const hashed = await paths('hash');
    assert.match(hashed[0]!, /^\/reset\?hmac:[0-9a-f]{16}$/);
    assert.equal(hashed[1], hashed[0], 'equal queries give equal hashes within a run');
    assert.notEqual(hashed[2], hashed[0]);
    assert.equal(hashed[3], '/plain');
    assert.equal(loggedPath('/empty?', 'hash', Buffer.alloc(32)), '/empty', 'an empty query is no query');
    const again = await paths('hash');
    assert.notEqual(again[0], hashed[0], 'the key is drawn per process, so a hash cannot be looked up in a dictionary made elsewhere');
  } finally {
    await origin.close();
  }
});
