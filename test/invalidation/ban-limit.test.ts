// Issue 14 item 6: active bans are bounded. A new ban from an operator beyond `max_active_bans` is
// refused before anything changes (admitBan, which the admin API asks), with a stable code, a
// Retry-After and a metric; bans from other nodes go straight to ban() and are applied regardless,
// so that nodes never disagree on what is banned; the fields of a new ban are bounded in length,
// which bounds what one ban costs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BAN_RETENTION_MS } from '../../src/invalidation/create-invalidator.js';
import { MAX_BAN_REGEX_BYTES } from '../../src/invalidation/ban.js';
import { BanLimitError, InvalidBanError } from '../../src/invalidation/errors.js';
import { MAX_TAG_LENGTH } from '../../src/cache/policy/surrogate-keys.js';
import { startTestOrigin } from '../support/test-origin.js';
import { startSvc } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';
import { entry, openRig, serve, T0 } from './fixture.js';

const TOKEN = 'test-admin-token-0123456789';

describe('the bound on active bans', () => {
  test('a ban beyond the bound is refused and changes nothing; one from another node is applied', async () => {
    const rig = await openRig({ engine: { maxActiveBans: 2 } });
    try {
      rig.cache.store(entry({ key: 'http://a.com/1' }));
      rig.clock.ms = T0 + 1000;
      await rig.invalidator.ban({ host_regex: 'first' });
      rig.clock.ms = T0 + 2000;
      await rig.invalidator.ban({ host_regex: 'second' });
      rig.clock.ms = T0 + 3000;
      assert.throws(() => rig.invalidator.admitBan({ host_regex: 'a\\.com' }), (error: unknown) => {
        assert.ok(error instanceof BanLimitError);
        assert.equal(error.code, 'ban_limit_reached');
        assert.equal(error.limit, 2);
        // The oldest ban, created at T0+1000, expires 24 hours later.
        assert.equal(error.oldestExpiresMs, T0 + 1000 + BAN_RETENTION_MS);
        assert.equal(error.retryAfterMs, BAN_RETENTION_MS - 2000);
        assert.ok(error.message.includes('max_active_bans'), error.message);
        return true;
      });
      assert.equal(rig.invalidator.bansRefused, 1);
      assert.deepEqual(
        rig.invalidator.activeBans().map((ban) => ban.host_regex),
        ['first', 'second'],
      );
      assert.equal(rig.invalidator.counts().ban, 2);
      assert.ok(serve(rig, 'http://a.com/1'), 'the refused ban hides nothing');

      await rig.invalidator.ban({ host_regex: 'a\\.com' });
      assert.equal(rig.invalidator.activeBanCount, 3);
      assert.equal(serve(rig, 'http://a.com/1'), undefined);
    } finally {
      await rig.cleanup();
    }
  });

  test('once the oldest ban is pruned, a new one fits again', async () => {
    const rig = await openRig({ engine: { maxActiveBans: 1 } });
    try {
      await rig.invalidator.ban({ surrogate_key: 'old' });
      assert.throws(() => rig.invalidator.admitBan({ surrogate_key: 'new' }), BanLimitError);
      rig.clock.ms = T0 + BAN_RETENTION_MS;
      // The refusal starts the prune of the expired ban, without waiting for the timer.
      assert.throws(() => rig.invalidator.admitBan({ surrogate_key: 'new' }), BanLimitError);
      await rig.invalidator.pruneNow();
      rig.invalidator.admitBan({ surrogate_key: 'new' });
      await rig.invalidator.ban({ surrogate_key: 'new' });
      assert.deepEqual(
        rig.invalidator.activeBans().map((ban) => ban.surrogate_key),
        ['new'],
      );
    } finally {
      await rig.cleanup();
    }
  });

  test('bans replayed from the journal are kept even beyond a lowered bound', async () => {
    const rig = await openRig();
    try {
      for (const tag of ['a', 'b', 'c']) await rig.invalidator.ban({ surrogate_key: tag });
      await rig.close();
      const restarted = await openRig({ dir: rig.dir, engine: { maxActiveBans: 2 } });
      try {
        assert.equal(restarted.invalidator.activeBanCount, 3);
        assert.throws(() => restarted.invalidator.admitBan({ surrogate_key: 'd' }), BanLimitError);
      } finally {
        await restarted.close();
      }
    } finally {
      await rig.cleanup();
    }
  });

  for (const [spec, field] of [
    [{ path_regex: `^/${'a'.repeat(MAX_BAN_REGEX_BYTES)}` }, 'path_regex'],
    [{ host_regex: 'é'.repeat(MAX_BAN_REGEX_BYTES / 2 + 1) }, 'host_regex'],
    [{ surrogate_key: 't'.repeat(MAX_TAG_LENGTH + 1) }, 'surrogate_key'],
  ] as const) {
    test(`a new ban with a ${field} too long is refused (field_too_long); one from another node is applied`, async () => {
      const rig = await openRig();
      try {
        assert.throws(() => rig.invalidator.admitBan(spec), (error: unknown) => {
          assert.ok(error instanceof InvalidBanError);
          assert.equal(error.code, 'field_too_long');
          assert.equal(error.field, field);
          return true;
        });
        assert.equal(rig.invalidator.activeBanCount, 0);
        await rig.invalidator.ban(spec);
        assert.equal(rig.invalidator.activeBanCount, 1);
      } finally {
        await rig.cleanup();
      }
    });
  }

  test('a bad ban is answered as such before the bound is looked at', async () => {
    const rig = await openRig({ engine: { maxActiveBans: 1 } });
    try {
      await rig.invalidator.ban({ surrogate_key: 'one' });
      assert.throws(() => rig.invalidator.admitBan({ path_regex: '[' }), (error: unknown) => error instanceof InvalidBanError && error.code === 'invalid_regex');
      assert.throws(() => rig.invalidator.admitBan({}), (error: unknown) => error instanceof InvalidBanError && error.code === 'empty_ban');
      assert.equal(rig.invalidator.bansRefused, 0);
    } finally {
      await rig.cleanup();
    }
  });

  test('the longest fields accepted are accepted', async () => {
    const rig = await openRig();
    try {
      const longest = { path_regex: 'a'.repeat(MAX_BAN_REGEX_BYTES), surrogate_key: 't'.repeat(MAX_TAG_LENGTH) };
      rig.invalidator.admitBan(longest);
      await rig.invalidator.ban(longest);
      assert.equal(rig.invalidator.activeBanCount, 1);
    } finally {
      await rig.cleanup();
    }
  });

  test('through the admin API: 429 ban_limit_reached with Retry-After, counted in svc_bans_rejected_total', async () => {
    const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'x' }));
    const svc = await startSvc([origin.url], { config: { max_active_bans: 1 } });
    try {
      const ban = (body: unknown) =>
        fetchRaw(`${svc.adminUrl}/v1/ban`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      assert.equal((await ban({ surrogate_key: 'one' })).status, 200);
      const refused = await ban({ surrogate_key: 'two' });
      assert.equal(refused.status, 429);
      assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'ban_limit_reached');
      const retryAfter = Number(header(refused, 'retry-after'));
      // The oldest ban expires in 24 hours (less the moment the test took).
      assert.ok(retryAfter > BAN_RETENTION_MS / 1000 - 60 && retryAfter <= BAN_RETENTION_MS / 1000, String(retryAfter));
      const metrics = (await fetchRaw(`${svc.adminUrl}/metrics`)).body;
      assert.match(metrics, /^svc_bans_active 1$/m);
      assert.match(metrics, /^svc_bans_rejected_total 1$/m);
    } finally {
      await svc.stop();
      await origin.close();
    }
  });
});
