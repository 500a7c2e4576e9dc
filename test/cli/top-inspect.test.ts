// Issue 21 item 5: `svc top` (one node, or every member with --cluster), `svc inspect <url>` and
// `svc ready`, run as a user runs them against real nodes; the rate and quantile arithmetic on its own.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { bucketDelta, histogramBuckets, histogramQuantile, parseMetricsText } from '../../src/cli/top/metrics-text.js';
import { nodeView, renderTop, type NodeReading, type TopView } from '../../src/cli/top/top-view.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startSvcCluster, CLUSTER_TOKEN } from '../support/svc-cluster.js';
import { fetchRaw, header } from '../support/http.js';
import type { CacheCheckResponse } from '../../src/api/responses.js';
import { eventually } from '../support/eventually.js';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, CLI_PATH } from './support/run-cli.js';
import { PTY_MISSING, runInPty, shellQuote } from './support/pty.js';

const TOKEN = 'test-admin-token-0123456789';

const EXPOSITION = `# HELP svc_requests_total x
# TYPE svc_requests_total counter
svc_requests_total{method="GET",status="200",cache_result="HIT",source="hot",route="a \\"quoted\\" one"} 30
svc_requests_total{method="GET",status="200",cache_result="MISS",source="origin",route="main"} 10
svc_request_duration_seconds_bucket{le="0.001",route="main"} 20
svc_request_duration_seconds_bucket{le="0.01",route="main"} 36
svc_request_duration_seconds_bucket{le="0.1",route="main"} 40
svc_request_duration_seconds_bucket{le="+Inf",route="main"} 40
svc_hot_store_evictions_total 4
svc_hot_store_entries 7
svc_hot_store_bytes 2048
`;

describe('svc top arithmetic', () => {
  test('the exposition is read with its labels, escapes included', () => {
    const samples = parseMetricsText(EXPOSITION);
    assert.equal(samples.length, 9);
    assert.deepEqual(samples[0], {
      name: 'svc_requests_total',
      labels: { method: 'GET', status: '200', cache_result: 'HIT', source: 'hot', route: 'a "quoted" one' },
      value: 30,
    });
    assert.equal(samples[5]!.labels.le, '+Inf');
  });

  test('quantiles interpolate inside the bucket that holds the rank, as histogram_quantile does', () => {
    const buckets = histogramBuckets(parseMetricsText(EXPOSITION), 'svc_request_duration_seconds');
    assert.equal(histogramQuantile(0.5, buckets), 0.001);
    assert.ok(Math.abs(histogramQuantile(0.75, buckets)! - (0.001 + 0.009 * (10 / 16))) < 1e-12);
    assert.equal(histogramQuantile(0.99, new Map([[0.1, 1], [Infinity, 100]])), 0.1, 'a rank in +Inf answers the highest finite bound');
    assert.equal(histogramQuantile(0.5, new Map([[0.1, 0], [Infinity, 0]])), undefined);
    assert.deepEqual([...bucketDelta(new Map([[1, 5]]), new Map([[1, 8]]))], [[1, 3]]);
    assert.deepEqual([...bucketDelta(new Map([[1, 9]]), new Map([[1, 2]]))], [[1, 2]], 'a reset counts from zero');
  });

  test('rates are the increase over the interval between two readings', () => {
    const before: NodeReading = { name: 'n', atMs: 0, samples: parseMetricsText(EXPOSITION), stats: null };
    const later = EXPOSITION.replace('} 30', '} 50').replace('svc_hot_store_evictions_total 4', 'svc_hot_store_evictions_total 10');
    const view = nodeView(before, { ...before, atMs: 2_000, samples: parseMetricsText(later) });
    assert.equal(view.requestsPerSecond, 10);
    assert.equal(view.perSecondByCacheResult.HIT, 10);
    assert.equal(view.perSecondBySource.hot, 10);
    assert.equal(view.perSecondBySource.origin, 0);
    assert.equal(view.hitRatio, 1);
    assert.equal(view.totals.hitRatio, 50 / 60);
    assert.equal(view.evictionsPerSecond, 3);
    assert.equal(view.latencyMs, null, 'no observation in the interval');
    assert.deepEqual(view.hot, { entries: 7, bytes: 2048 });
    assert.equal(view.bansActive, null);
  });
});

test('latency is p50, p95 and p99, as on the dashboard, in the view and in the frame', () => {
  const before: NodeReading = { name: 'n', atMs: 0, samples: parseMetricsText(EXPOSITION), stats: null };
  const later = EXPOSITION.replace('"} 20', '"} 120').replace('"} 36', '"} 152').replace(/"\} 40/g, '"} 160');
  const view = nodeView(before, { ...before, atMs: 2_000, samples: parseMetricsText(later) });
  assert.deepEqual(Object.keys(view.latencyMs ?? {}), ['p50', 'p95', 'p99']);
  // 100, 116 and 120 requests at or under 1, 10 and 100 ms: the 114th is in the second bucket.
  assert.ok(Math.abs(view.latencyMs!.p95 - (1 + 9 * (14 / 16))) < 1e-9, String(view.latencyMs!.p95));
  const frame = renderTop({ at: 'now', intervalMs: 2_000, nodes: [view], peers: [] });
  assert.match(frame, /^ {2}latency +p50 \S+ ms +p95 8\.88 ms +p99 \S+ ms$/m);
});

describe('svc top, svc inspect and svc ready against a node', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;

  before(async () => {
    origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=60', 'surrogate-key': 'shoes' }, body: `body of ${request.url}` }));
    svc = await startSvc([origin.url]);
    for (let i = 0; i < 3; i++) await fetchRaw(`${svc.dataUrl}/shoes/red`);
  });
  after(async () => {
    await svc.stop();
    await origin.close();
  });

  test('svc top --once shows totals, tiers, bans and peers; JSON for scripts, text for people', async () => {
    const json = await runCli(['top', '--once', '--interval', '300ms', '--output', 'json', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(json.code, 0, json.stderr);
    const view = JSON.parse(json.stdout) as TopView;
    assert.equal(view.nodes.length, 1);
    const node = view.nodes[0]!;
    assert.deepEqual(node.totals.byCacheResult, { HIT: 2, STALE: 0, REVALIDATED: 0, MISS: 1, BYPASS: 0 });
    assert.equal(node.totals.hitRatio, 2 / 3);
    assert.equal(node.hot.entries, 1);
    assert.equal(node.warm, null, 'this node has no warm tier');
    assert.equal(node.bansActive, 0);
    assert.deepEqual(view.peers, []);

    const text = await runCli(['top', '--once', '--interval', '300ms', '--server', svc.adminUrl], { env: { NO_COLOR: '' } });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ {2}since start +3 +2 +0 +0 +1 +0 +66\.7%$/m);
    assert.match(text.stdout, /^ {2}bans +- \(needs --token\)$/m);
    assert.match(text.stdout, /^peers +none: this node runs alone$/m);
    assert.ok(!text.stdout.includes('\x1b['), 'no escape codes off a terminal');

    const bad = await runCli(['top', '--interval', '10ms', '--server', svc.adminUrl]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'svc: --interval must be a duration of at least 200ms, like 2s, got "10ms"\n');
  });

  test('on a terminal, q, Q and Ctrl-C end svc top at once and give the terminal its mode back', { skip: PTY_MISSING }, async () => {
    // An interval far longer than the test's wait: top must end on the key, not at its next refresh.
    const top = [process.execPath, CLI_PATH, 'top', '--interval', '10m', '--server', svc.adminUrl].map(shellQuote).join(' ');
    for (const [name, key] of [['q', 'q'], ['Q', 'Q'], ['Ctrl-C', '\x03']] as const) {
      const pty = runInPty(`echo "mode before $(stty -g)"; ${top}; echo "top ended $?"; echo "mode after $(stty -g)"`);
      try {
        await pty.waitFor(/q or Ctrl-C quits\n/);
        pty.type(key);
        await pty.waitFor(/mode after /);
        assert.equal(await pty.exited, 0, pty.output());
        const output = pty.output();
        assert.match(output, /^top ended 0$/m, `${name} ends top with status 0`);
        const mode = (when: string): string => new RegExp(`^mode ${when} (\\S+)$`, 'm').exec(output)?.[1] ?? '';
        assert.notEqual(mode('before'), '');
        assert.equal(mode('after'), mode('before'), `after ${name} the terminal is in the mode it was in`);
      } finally {
        pty.kill();
      }
    }
  });

  test('off a terminal, svc top runs until SIGINT (Ctrl-C in a shell), as any command', async () => {
    const child = spawn(process.execPath, [CLI_PATH, 'top', '--interval', '300ms', '--server', svc.adminUrl], { env: { PATH: process.env.PATH, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, signal) => resolve([code, signal])));
    try {
      // Keys on a pipe are data, not commands: a q on standard input does not end it.
      child.stdin.write('q');
      await eventually('two frames', () => stdout.split('svc top ').length - 1, (frames) => frames >= 2);
      assert.equal(child.exitCode, null, 'still running after a q on a pipe');
      child.kill('SIGINT');
      assert.deepEqual(await ended, [null, 'SIGINT']);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('svc inspect <url> shows the cache state readably; --output json prints the body', async () => {
    await fetchRaw(`${svc.dataUrl}/shoes/blue`);
    const url = `${svc.dataUrl}/shoes/blue`;
    const text = await runCli(['inspect', url, '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^${url.replace(/[.]/g, '\\.')}\\n {2}key +`));
    assert.match(text.stdout, /^ {2}cached +yes, fresh: a plain GET is a HIT from the hot tier$/m);
    assert.match(text.stdout, /^ {2}tags +shoes$/m);
    assert.match(text.stdout, /^ {2}variants +1 \(1 in the hot tier\)$/m);
    assert.match(text.stdout, /^ {4}hot +200 +fresh +\d+ s +\d+ s +\d+ +- +-$/m);

    const ban = await runCli(['ban', 'path_regex=^/shoes/blue$', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(ban.code, 0, ban.stderr);
    const banned = await runCli(['inspect', url, '--server', svc.adminUrl, '--token', TOKEN]);
    assert.match(banned.stdout, /^ {2}cached +no: a plain GET goes to the origin$/m);
    assert.match(banned.stdout, /^ {2}bans +1 active ban match$/m);
    assert.match(banned.stdout, /^ {4}\S+ +path_regex=\^\/shoes\/blue\$ +until \d{4}-/m);

    const json = await runCli(['inspect', `${svc.dataUrl}/never`, '--output', 'json', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal((JSON.parse(json.stdout) as { hit: boolean }).hit, false);
    const relative = await runCli(['inspect', '/shoes', '--server', svc.adminUrl, '--token', TOKEN]);
    assert.equal(relative.code, 2);
  });

  test('svc ready exits 0 when ready and 1, saying why, once drained; svc undrain puts the node back', async () => {
    const ready = await runCli(['ready', '--server', svc.adminUrl]);
    assert.equal(ready.code, 0, ready.stderr);
    assert.equal(ready.stdout, 'ready\n');
    const origin2 = await startTestOrigin();
    const drained = await startSvc([origin2.url]);
    try {
      await fetchRaw(`${drained.adminUrl}/drain`);
      const notReady = await runCli(['ready', '--wait', '300ms', '--server', drained.adminUrl]);
      assert.equal(notReady.code, 1);
      assert.match(notReady.stderr, /^svc: not ready: drained/);
      const undrained = await runCli(['undrain', '--server', drained.adminUrl, '--token', TOKEN]);
      assert.equal(undrained.code, 0, undrained.stderr);
      assert.equal(undrained.stdout, 'serving\n');
      const json = await runCli(['undrain', '--server', drained.adminUrl, '--token', TOKEN, '--output', 'json']);
      assert.deepEqual(JSON.parse(json.stdout), { status: 'serving' });
      assert.equal((await runCli(['ready', '--server', drained.adminUrl])).code, 0);
      const anonymous = await runCli(['undrain', '--server', drained.adminUrl]);
      assert.equal(anonymous.code, 2);
    } finally {
      await drained.stop();
      await origin2.close();
    }
  });
});

describe('svc inspect tells fresh, STALE and expired apart, and counts variants per key', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let dir: string;
  const inspect = (path: string) => runCli(['inspect', `${svc.dataUrl}${path}`, '--server', svc.adminUrl, '--token', TOKEN]);
  const check = async (path: string): Promise<CacheCheckResponse> =>
    JSON.parse((await fetchRaw(`${svc.adminUrl}/v1/debug/cachecheck?url=${encodeURIComponent(`${svc.dataUrl}${path}`)}`, { headers: { authorization: `Bearer ${TOKEN}` } })).body) as CacheCheckResponse;

  before(async () => {
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=10, stale-while-revalidate=10, stale-if-error=30' }, body: 'x' }));
    dir = await mkdtemp(join(tmpdir(), 'svc-inspect-'));
    // A clock only the test moves, and a warm tier, so that every response is held in both tiers.
    svc = await startSvc([origin.url], { frozenClock: true, config: { warm: { path: join(dir, 'warm'), max_bytes: 10_000_000 } } });
  });
  after(async () => {
    await svc?.stop();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('one variant held in both tiers is one variant, with a copy in each', async () => {
    await fetchRaw(`${svc.dataUrl}/both`);
    await eventually('the copy in the warm tier', () => check('/both'), (answer) => answer.variants.length === 2);
    const run = await inspect('/both');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}cached +yes, fresh: a plain GET is a HIT from the hot tier$/m);
    assert.match(run.stdout, /^ {2}variants +1 \(1 in both tiers\)$/m);
    // 9 or 10 s left: the origin's Date has whole seconds, so the age behind it is up to a second
    // more than the 0 s shown, on whichever side of a second the response fell.
    assert.match(run.stdout, /^ {4}hot +200 +fresh +0 s +(?:9|10) s +1 +- +-$/m);
    assert.match(run.stdout, /^ {4}warm +200 +fresh +0 s +(?:9|10) s +1 +- +-$/m);
    assert.doesNotMatch(run.stdout, /fallback/, 'a fresh copy needs no word on a failing origin');
  });

  test('past max-age within stale-while-revalidate it says STALE, and a GET is answered STALE', async () => {
    await fetchRaw(`${svc.dataUrl}/stale`);
    await fetchRaw(`${svc.dataUrl}/expired`);
    svc.clock.advance(15_000);
    const run = await inspect('/stale');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}cached +yes, STALE: a plain GET is answered STALE from the hot tier while svc revalidates it, for 5 s more \(stale-while-revalidate\)$/m);
    assert.match(run.stdout, /^ {2}fallback +served STALE if the origin answers an error, for 25 s more \(stale-if-error\); if it cannot be reached, for 295 s more$/m);
    assert.match(run.stdout, /^ {4}hot +200 +stale +15 s +-5 s /m);
    assert.equal(header(await fetchRaw(`${svc.dataUrl}/stale`), 'x-cache'), 'STALE', 'what inspect said is what a GET gets');
  });

  test('past max-age + stale-while-revalidate it says expired, not cached-as-is, and a GET goes to the origin', async () => {
    svc.clock.advance(10_000);
    const run = await inspect('/expired');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}cached +yes, expired: past its freshness and any stale-while-revalidate window, a plain GET waits for the origin/m);
    assert.match(run.stdout, /^ {2}fallback +served STALE if the origin answers an error, for 15 s more \(stale-if-error\); if it cannot be reached, for 285 s more$/m);
    assert.doesNotMatch(run.stdout, /HIT|served from the hot tier/);
    const json = await check('/expired');
    assert.deepEqual([json.state, json.stale_while_revalidate_s, json.stale_if_error_s, json.stale_if_unreachable_s], ['expired', 0, 15, 285]);
    const requestsBefore = origin.requests.length;
    const answer = await fetchRaw(`${svc.dataUrl}/expired`);
    assert.notEqual(header(answer, 'x-cache'), 'HIT');
    assert.notEqual(header(answer, 'x-cache'), 'STALE');
    assert.equal(origin.requests.length, requestsBefore + 1, 'the origin was asked');
  });

  test('past every window the fallback says none', async () => {
    await fetchRaw(`${svc.dataUrl}/gone`);
    svc.clock.advance(400_000);
    const run = await inspect('/gone');
    assert.match(run.stdout, /^ {2}fallback +none: if the origin fails, its error is passed on$/m);
  });
});

test('svc top --cluster shows every member, read from any of them', { timeout: 120_000 }, async () => {
  const origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'x' }));
  const cluster = await startSvcCluster({ names: ['a', 'b'], mode: 'eventual', originUrl: origin.url });
  try {
    await fetchRaw(`${cluster.node('b').dataUrl}/on-b`);
    const run = await runCli(['top', '--once', '--cluster', '--interval', '300ms', '--output', 'json', '--server', cluster.node('a').adminUrl, '--token', CLUSTER_TOKEN]);
    assert.equal(run.code, 0, run.stderr);
    const view = JSON.parse(run.stdout) as TopView;
    assert.deepEqual(view.nodes.map((node) => node.name).sort(), ['a', 'b']);
    assert.equal(view.nodes.find((node) => node.name === 'b')!.totals.byCacheResult.MISS, 1, "b's own traffic, read from b");
    assert.equal(view.nodes.find((node) => node.name === 'a')!.totals.requests, 0);
    assert.deepEqual(view.peers.map((peer) => peer.state), ['alive', 'alive']);
  } finally {
    await cluster.close();
    await origin.close();
  }
});
