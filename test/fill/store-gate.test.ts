// The store gate (issue 15 item 2): a fill that a purge, ban or refresh made after its origin request
// started never stores what it fetched, however long it runs. Each test runs a fill for 10 minutes of
// the node's clock, far past the purge records' window, with the invalidation made in between; the
// fill's own client still gets its answer, and the next request goes to the origin for the new body.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchRaw, header } from '../support/http.js';
import { metricValue } from '../support/caching-fixture.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';

const OLD = 'o'.repeat(64 * 1024);
const NEW = 'n'.repeat(64 * 1024);
const TEN_MINUTES_MS = 10 * 60 * 1000;
const TOKEN = 'test-admin-token-0123456789';

/** An origin whose first answer per path stops half-way until released; later answers are the new body. */
class SlowFirstOrigin {
  readonly server: Server;
  private readonly seen = new Map<string, number>();
  private readonly halfSent = new Map<string, () => void>();
  private readonly held = new Map<string, ServerResponse>();

  constructor() {
    this.server = createServer((request, response) => {
      request.resume();
      const path = request.url ?? '/';
      const count = this.seen.get(path) ?? 0;
      this.seen.set(path, count + 1);
      const body = count === 0 ? OLD : NEW;
      response.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': String(body.length), 'surrogate-key': 'gated' });
      if (count > 0) {
        response.end(body);
        return;
      }
      response.write(body.slice(0, body.length / 2), () => this.halfSent.get(path)?.());
      this.held.set(path, response);
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  requests(path: string): number {
    return this.seen.get(path) ?? 0;
  }

  /** Resolves once the first answer for `path` has sent its first half. */
  halfWay(path: string): Promise<void> {
    return new Promise((resolve) => this.halfSent.set(path, resolve));
  }

  release(path: string): void {
    this.held.get(path)?.end(OLD.slice(OLD.length / 2));
  }
}

describe('the store gate: an invalidation during a fill is never undone', { timeout: 60_000 }, () => {
  let origin: SlowFirstOrigin;
  let svc: SvcUnderTest;
  before(async () => {
    origin = new SlowFirstOrigin();
    await new Promise<void>((resolve) => origin.server.listen(0, '127.0.0.1', resolve));
    svc = await startSvc([origin.url]);
  });
  after(async () => {
    await svc.stop();
    await new Promise<void>((resolve) => {
      origin.server.close(() => resolve());
      origin.server.closeAllConnections();
    });
  });

  const admin = async (operation: string, body: Record<string, string>): Promise<void> => {
    const answer = await fetchRaw(`${svc.adminUrl}/v1/${operation}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 200, answer.body);
  };

  const cases: { name: string; path: string; invalidate: (url: string) => Promise<void> }[] = [
    { name: 'a purge', path: '/gated/purge', invalidate: (url) => admin('purge', { url }) },
    { name: 'a ban', path: '/gated/ban', invalidate: () => admin('ban', { path_regex: '^/gated/ban$' }) },
    { name: 'a ban by surrogate key', path: '/gated/tag', invalidate: () => admin('ban', { surrogate_key: 'gated' }) },
    { name: 'a refresh', path: '/gated/refresh', invalidate: (url) => admin('refresh', { url }) },
  ];
  for (const { name, path, invalidate } of cases) {
    test(`${name} during a 10-minute fill: the fill's client gets its answer, the next request is a MISS with the new body`, async () => {
      const url = `${svc.dataUrl}${path}`;
      const halfWay = origin.halfWay(path);
      const first = fetchRaw(url);
      await halfWay;
      await invalidate(url);
      svc.clock.advance(TEN_MINUTES_MS);
      // Every purge record older than the window is gone now: only the gate stands between the
      // fill and the cache.
      await svc.node.invalidator.pruneNow();
      const refusedBefore = metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, 'svc_fill_store_refused_total');
      origin.release(path);
      const answered = await first;
      assert.equal(header(answered, 'x-cache'), 'MISS');
      assert.equal(answered.body, OLD, 'the fill still completes to its own client');
      const next = await fetchRaw(url);
      assert.equal(header(next, 'x-cache'), 'MISS');
      assert.equal(next.body, NEW);
      assert.equal(origin.requests(path), 2);
      assert.equal(metricValue((await fetchRaw(`${svc.adminUrl}/metrics`)).body, 'svc_fill_store_refused_total'), refusedBefore + 1);
      assert.equal(header(await fetchRaw(url), 'x-cache'), 'HIT', 'the new body is stored');
    });
  }

  test('a request made after the purge does not join the fill that started before it', async () => {
    const path = '/gated/join';
    const url = `${svc.dataUrl}${path}`;
    const halfWay = origin.halfWay(path);
    const first = fetchRaw(url);
    await halfWay;
    await admin('purge', { url });
    const after = await fetchRaw(url);
    assert.equal(after.body, NEW);
    origin.release(path);
    assert.equal((await first).body, OLD);
    assert.equal(origin.requests(path), 2);
  });
});
