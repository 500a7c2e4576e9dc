// `GET /v1/bans` (issue 20): the active bans, newest first, every field present (null when absent),
// their age by the node's clock, and what each matched on this node (`evicted`, `hidden`, always
// present); through the API, the typed client and `svc bans`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { banListEntry } from '../../src/admin/bans-route.js';
import { bansResponseSchema } from '../../src/api/responses.js';
import type { ActiveBan } from '../../src/invalidation/invalidator.js';
import { createAdminClient } from '../../src/client/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw } from '../support/http.js';
import { runCli } from '../cli/support/run-cli.js';

const TOKEN = 'test-admin-token-0123456789';

describe('GET /v1/bans', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  const client = () => createAdminClient({ server: svc.adminUrl, token: TOKEN });

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600', 'surrogate-key': `tag-${request.url?.slice(1)}` }, body: 'x' }));
    // Frozen: ages are asserted to the second.
    svc = await startSvc([origin.url], { frozenClock: true });
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('no bans: an empty list; no token: 401', async () => {
    assert.deepEqual(await client().bans(), { bans: [] });
    const anonymous = await fetchRaw(`${svc.adminUrl}/v1/bans`);
    assert.equal(anonymous.status, 401);
    const cli = await runCli(['bans', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(cli.stdout, 'no active bans\n');
  });

  test('newest first, with null for absent fields and the age by the node\'s clock', async () => {
    await fetchRaw(`${svc.dataUrl}/a`);
    await client().ban({ surrogate_key: 'tag-a' });
    svc.clock.advance(90_000);
    await client().ban({ host_regex: '^127\\.0\\.0\\.1', path_regex: '^/b' });
    svc.clock.advance(30_000);
    const { bans } = await client().bans();
    assert.equal(bans.length, 2);
    const [newer, older] = bans as [(typeof bans)[number], (typeof bans)[number]];
    assert.deepEqual(
      { host_regex: newer.host_regex, path_regex: newer.path_regex, surrogate_key: newer.surrogate_key, age_s: newer.age_s },
      { host_regex: '^127\\.0\\.0\\.1', path_regex: '^/b', surrogate_key: null, age_s: 30 },
    );
    assert.deepEqual(
      { host_regex: older.host_regex, path_regex: older.path_regex, surrogate_key: older.surrogate_key, age_s: older.age_s },
      { host_regex: null, path_regex: null, surrogate_key: 'tag-a', age_s: 120 },
    );
    assert.equal(Date.parse(older.expires_at) - Date.parse(older.created_at), 24 * 60 * 60 * 1000);
    // What each matched, as the engine counts it: /a (tag-a) was in the hot tier and evicted by the
    // older ban; nothing under /b was stored; no lookup has been refused yet.
    const engine = svc.node.invalidator.activeBans().reverse();
    assert.deepEqual(bans.map((ban) => [ban.id, ban.evicted, ban.hidden]), engine.map((ban) => [ban.id, ban.evicted, ban.hidden]));
    assert.deepEqual(bans.map((ban) => [ban.evicted, ban.hidden]), [[0, 0], [1, 0]]);
  });

  test('evicted and hidden are carried from the engine\'s ActiveBan', () => {
    const ban: ActiveBan = {
      id: 'b1',
      surrogate_key: 'k',
      created_at: '2025-01-01T00:00:00.000Z',
      expires_at: '2025-01-02T00:00:00.000Z',
      evicted: 3,
      hidden: 7,
    };
    const entry = banListEntry(ban, Date.parse('2025-01-01T00:01:01.500Z'));
    assert.deepEqual(entry, { ...ban, host_regex: null, path_regex: null, age_s: 61 });
    assert.ok(v.is(bansResponseSchema, { bans: [entry] }));
  });

  test('svc bans prints a table, and --output json the response body', async () => {
    const table = await runCli(['bans', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID {8}AGE +EXPIRES IN +EVICTED +HIDDEN +PREDICATE$/);
    assert.match(lines[1] ?? '', /^[0-9a-f]{8} +30s +23h59m +0 +0 +host_regex=\^127\\\.0\\\.0\\\.1 path_regex=\^\/b$/);
    assert.match(lines[2] ?? '', /^[0-9a-f]{8} +2m +23h58m +1 +0 +surrogate_key=tag-a$/);
    const json = await runCli(['bans', '--server', svc.adminUrl, '--token', TOKEN, '--output', 'json']);
    assert.deepEqual(JSON.parse(json.stdout), await client().bans());
  });

  test('svc bans without a token is a usage error (exit 2); a wrong token exits 1', async () => {
    const none = await runCli(['bans', '--server', svc.adminUrl]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no admin token/);
    const wrong = await runCli(['bans', '--server', svc.adminUrl, '--token', 'wrong-token-0123456789']);
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, 'svc: bans failed: 401 invalid_token: the bearer token is not the admin token\n');
  });
});
