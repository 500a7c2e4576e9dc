// Issue 18 item 5: a purge the CDN did not confirm is never forgotten. Pending purges are kept beside
// the invalidation journal under the warm tier and sent after a restart; without a warm tier the node
// says at startup and at stop what that costs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeCdn, OK, cloudflareError, type FakeCdn, type FakeCdnHandler } from './support/fake-cdn.js';
import { eventually } from '../support/eventually.js';
import { startCdnNode, type CdnNode } from './support/cdn-node.js';
import { PENDING_FILE_NAME } from '../../src/cdn/pending-purges.js';
import { CdnError } from '../../src/cdn/errors.js';

const SITE = 'https://shop.example.com';

describe('pending CDN purges', () => {
  let cdn: FakeCdn;
  let warmDir: string;

  before(async () => {
    cdn = await startFakeCdn();
  });
  after(async () => {
    await cdn.close();
  });

  async function start(handler: FakeCdnHandler, warm = true): Promise<CdnNode> {
    cdn.handle(handler);
    return startCdnNode(cdn, warm ? { warmDir } : {});
  }

  async function withWarmDir(run: () => Promise<void>): Promise<void> {
    warmDir = await mkdtemp(join(tmpdir(), 'svc-cdn-pending-'));
    try {
      await run();
    } finally {
      await rm(warmDir, { recursive: true, force: true });
    }
  }

  test('purges the CDN did not confirm survive a restart and are sent after it', () =>
    withWarmDir(async () => {
      cdn.calls.length = 0;
      const first = await start(() => ({ status: 503 }));
      const urls = Array.from({ length: 40 }, (_, i) => `${SITE}/batch/${i}`);
      await first.admin('POST', '/v1/purge', { url: `${SITE}/single` });
      await eventually('the first call to run out of retries', () => first.status(), (status) => status.last_error !== null);
      await first.admin('POST', '/v1/purge/batch', { urls });
      assert.equal((await first.status()).pending, 41);
      await first.stop();
      const journal = await readFile(join(warmDir, 'invalidation', PENDING_FILE_NAME), 'utf8');
      assert.ok(journal.includes(`${SITE}/single`) && journal.includes(`${SITE}/batch/39`), 'the pending purges are on disk');

      cdn.calls.length = 0;
      const second = await start(() => OK);
      try {
        const started = second.svc.logs.lines.find((line) => line.msg === 'CDN propagation on');
        assert.equal(started?.pending, 41);
        await eventually('the pending purges to be sent', () => second.status(), (status) => status.pending === 0);
        const sent = cdn.calls.flatMap((call) => call.body.files as string[]);
        assert.deepEqual(sent, [`${SITE}/single`, ...urls], 'each once, oldest first');
        assert.equal(cdn.calls.length, 2, '41 purges in ceil(41 / 30) calls');
      } finally {
        await second.stop();
      }

      cdn.calls.length = 0;
      const third = await start(() => OK);
      try {
        assert.equal((await third.status()).pending, 0, 'confirmed purges are not sent again');
      } finally {
        await third.stop();
      }
    }));

  test('a CDN that refuses the token keeps the purges pending and stops sending until a restart', () =>
    withWarmDir(async () => {
      cdn.calls.length = 0;
      const first = await start(() => cloudflareError(403, 10000, 'Authentication error'));
      await first.admin('POST', '/v1/purge', { url: `${SITE}/a` });
      await eventually('the refusal', () => first.status(), (status) => status.last_error !== null);
      const timersAsked = first.timers.waits.length;
      await first.admin('POST', '/v1/ban', { surrogate_key: 'b' });
      // Once the ban is pending, the queue has decided whether to send: every send of so few purges
      // (a batch window, a retry) waits on a timer the test's timers record, so none asked for
      // proves that nothing will go out, without waiting to see.
      await eventually('the ban pending', () => first.status(), (status) => status.pending === 2);
      assert.deepEqual(first.timers.waits.slice(timersAsked), [], 'no send and no retry scheduled after the refusal');
      assert.equal(cdn.calls.length, 1, 'nothing sent after the refusal, no retry of it');
      assert.equal((await first.svc.logs.find('the refusal logged', (line) => line.msg === 'CDN refused the token or zone: purges stay pending until the node restarts')).level, 'warn');
      await first.stop();

      cdn.calls.length = 0;
      const second = await start(() => OK);
      try {
        await eventually('the pending purges to be sent', () => second.status(), (status) => status.pending === 0);
        assert.deepEqual(
          cdn.calls.map((call) => call.body),
          [{ files: [`${SITE}/a`] }, { tags: ['b'] }],
        );
      } finally {
        await second.stop();
      }
    }));

  test('a damaged pending journal stops the node from starting, naming the file and line', () =>
    withWarmDir(async () => {
      await mkdir(join(warmDir, 'invalidation'), { recursive: true });
      await writeFile(join(warmDir, 'invalidation', PENDING_FILE_NAME), '{"type":"queued"}\n{"type":"done","seqs":[]}\n');
      await assert.rejects(start(() => OK), (error: unknown) => {
        assert.ok(error instanceof CdnError);
        assert.equal(error.code, 'corrupt_pending');
        assert.match(error.message, /cdn-pending\.jsonl line 1 is not a pending CDN purge record/);
        return true;
      });
    }));

  test('without a warm tier pending purges live in memory: said at startup, and counted when the node stops', async () => {
    const node = await start(() => ({ status: 503 }), false);
    assert.equal(node.svc.logs.lines.find((line) => String(line.msg).startsWith('no warm tier: CDN purges'))?.level, 'warn');
    await node.admin('POST', '/v1/purge', { url: `${SITE}/lost` });
    await eventually('the retries to run out', () => node.status(), (status) => status.last_error !== null);
    await node.stop();
    const lost = node.svc.logs.lines.find((line) => line.msg === 'stopping with CDN purges not confirmed; without a warm tier they are lost');
    assert.equal(lost?.level, 'error');
    assert.equal(lost?.pending, 1);
  });
});
