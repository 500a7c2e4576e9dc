// Issue 4 item 6: `svc purge`, its batch form, `svc ban` and `svc refresh` as a user runs them: a
// child process against a real node, output in text and JSON, failures as one line with exit 1 or 2.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PURGE_BATCH_MAX_URLS } from '../../src/api/limits.js';
import { createAdminClient } from '../../src/client/index.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { fetchRaw, header } from '../support/http.js';
import { runCli } from './support/run-cli.js';

const TOKEN = 'test-admin-token-0123456789';

describe('svc purge, ban and refresh', () => {
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let dir: string;
  const cli = (args: string[], options: Parameters<typeof runCli>[1] = {}) => runCli([...args, '--server', svc.adminUrl], options);
  const withToken = (args: string[], stdin?: string) => cli([...args, '--token', TOKEN], stdin === undefined ? {} : { stdin });
  const cacheState = async (path: string) => header(await fetchRaw(`${svc.dataUrl}${path}`), 'x-cache');

  before(async () => {
    origin = await startTestOrigin((request) => ({
      headers: { 'cache-control': 'max-age=60', 'x-cache-tags': request.url?.startsWith('/shoes') ? 'shoes' : 'other' },
      body: 'x',
    }));
    svc = await startSvc([origin.url]);
    dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  });
  after(async () => {
    await svc.stop();
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('svc purge <url> purges and says so; --output json prints the response body', async () => {
    await fetchRaw(`${svc.dataUrl}/one`);
    const text = await withToken(['purge', `${svc.dataUrl}/one`]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `purged ${svc.dataUrl}/one (1 stored variants removed)\n`);
    assert.equal(await cacheState('/one'), 'MISS');
    const json = await withToken(['purge', `${svc.dataUrl}/one`, '--output', 'json']);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(JSON.parse(json.stdout), { status: 'purged', count: 1, keys: [`http://${authority}/one`, `https://${authority}/one`] });
  });

  test('the token falls back to SVC_ADMIN_TOKEN', async () => {
    const run = await cli(['purge', `${svc.dataUrl}/env`], { env: { SVC_ADMIN_TOKEN: TOKEN } });
    assert.equal(run.code, 0, run.stderr);
  });

  test('several URLs go as one batch and report the totals', async () => {
    await fetchRaw(`${svc.dataUrl}/m1`);
    await fetchRaw(`${svc.dataUrl}/m2`);
    const run = await withToken(['purge', `${svc.dataUrl}/m1`, `${svc.dataUrl}/m2`, '--output', 'json']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { status: 'purged', count: 2, failed: 0 });
    assert.equal(await cacheState('/m2'), 'MISS');
  });

  test('--file reads one URL per line, skipping blanks and comments', async () => {
    await fetchRaw(`${svc.dataUrl}/f1`);
    const path = join(dir, 'urls.txt');
    await writeFile(path, `# product pages\n${svc.dataUrl}/f1\n\n  ${svc.dataUrl}/f2  \n`);
    const run = await withToken(['purge', '--file', path]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'purged 2 URLs (1 stored variants removed, 0 failed)\n');
    assert.equal(await cacheState('/f1'), 'MISS');
  });

  test('a batch with entries that are not URLs purges nothing and names them, from a file as from arguments (exit 2)', async () => {
    await fetchRaw(`${svc.dataUrl}/b1`);
    const path = join(dir, 'bad-urls.txt');
    await writeFile(path, `# product pages\n${svc.dataUrl}/b1\nnot-a-url\n\n/relative\n`);
    const fromFile = await withToken(['purge', '--file', path]);
    assert.equal(fromFile.code, 2);
    assert.equal(fromFile.stdout, '');
    assert.equal(
      fromFile.stderr,
      `svc: ${path} line 3: not an absolute http:// or https:// URL with a host: not-a-url\n` +
        `svc: ${path} line 5: not an absolute http:// or https:// URL with a host: /relative\n` +
        'svc: nothing was purged: 2 of 3 entries are not URLs; fix them and run again\n',
    );
    const fromArguments = await withToken(['purge', `${svc.dataUrl}/b1`, 'not-a-url', '/relative']);
    assert.equal(fromArguments.code, 2);
    assert.equal(
      fromArguments.stderr,
      'svc: argument 2: not an absolute http:// or https:// URL with a host: not-a-url\n' +
        'svc: argument 3: not an absolute http:// or https:// URL with a host: /relative\n' +
        'svc: nothing was purged: 2 of 3 entries are not URLs; fix them and run again\n',
    );
    assert.equal(await cacheState('/b1'), 'HIT', 'the valid URL was not purged either');
  });

  test('unknown flags and extra arguments are refused in one line (exit 2), and nothing is done', async () => {
    await fetchRaw(`${svc.dataUrl}/shoes/dry`);
    const cases: [string[], string][] = [
      [['ban', 'path_regex=^/shoes/dry$', '--dry-run'], 'svc: unknown flag --dry-run for svc ban (see svc ban --help)\n'],
      [['purge', `${svc.dataUrl}/shoes/dry`, '--sever=127.0.0.1:1'], 'svc: unknown flag --sever for svc purge (see svc purge --help)\n'],
      [['refresh', `${svc.dataUrl}/shoes/dry`, `${svc.dataUrl}/x`], `svc: unexpected argument "${svc.dataUrl}/x": svc refresh takes 1 argument (see svc refresh --help)\n`],
      [['cluster', 'peers', 'extra'], 'svc: unexpected argument "extra": svc cluster peers takes no arguments (see svc cluster peers --help)\n'],
      [['cluster', 'pears'], 'svc: unknown command "pears" for svc cluster: expected one of peers (see svc cluster --help)\n'],
    ];
    for (const [args, stderr] of cases) {
      const run = await withToken(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr, stderr);
      assert.equal(run.stdout, '');
    }
    assert.equal(await cacheState('/shoes/dry'), 'HIT', 'neither the ban nor the purge was sent');
    const noValue = await runCli(['purge', `${svc.dataUrl}/shoes/dry`, '--server', svc.adminUrl, '--token', TOKEN, '--file']);
    assert.equal(noValue.code, 2);
    assert.equal(noValue.stderr, 'svc: --file needs a value (see svc purge --help)\n');
    const version = await runCli(['version', '--output', 'json', '--verbose']);
    assert.equal(version.code, 2);
    assert.equal(version.stderr, 'svc: unknown flag --verbose for svc version (see svc version --help)\n');
  });

  test(`--file - reads standard input and sends chunks of at most ${PURGE_BATCH_MAX_URLS} URLs`, async () => {
    const client = createAdminClient({ server: svc.adminUrl, token: TOKEN });
    const before = (await client.stats()).invalidations.purge_batch;
    const urls = Array.from({ length: PURGE_BATCH_MAX_URLS + 500 }, (_, i) => `${svc.dataUrl}/bulk/${i}`);
    await fetchRaw(urls[1200]!);
    const run = await withToken(['purge', '--file', '-', '--output', 'json'], urls.join('\n'));
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { status: 'purged', count: 1, failed: 0 });
    assert.equal((await client.stats()).invalidations.purge_batch, before + 2);
  });

  test('svc ban field=value… bans with AND and reports the evictions', async () => {
    await fetchRaw(`${svc.dataUrl}/shoes/red`);
    await fetchRaw(`${svc.dataUrl}/shoes/blue`);
    await fetchRaw(`${svc.dataUrl}/hats/red`);
    const run = await withToken(['ban', 'surrogate_key=shoes', 'path_regex=red$']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'banned: 1 hot entries evicted; the ban hides matching warm entries for 24 hours\n');
    assert.equal(await cacheState('/shoes/red'), 'MISS');
    assert.equal(await cacheState('/shoes/blue'), 'HIT');
    assert.equal(await cacheState('/hats/red'), 'HIT');
  });

  test('svc refresh <url> marks the entry stale', async () => {
    await fetchRaw(`${svc.dataUrl}/fresh`);
    const run = await withToken(['refresh', `${svc.dataUrl}/fresh`, '--output', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const authority = new URL(svc.dataUrl).host;
    assert.deepEqual(JSON.parse(run.stdout), { status: 'refreshed', count: 1, keys: [`http://${authority}/fresh`, `https://${authority}/fresh`] });
    assert.notEqual(await cacheState('/fresh'), 'HIT');
  });

  test('usage errors exit 2 with one line', async () => {
    const cases: [string[], RegExp][] = [
      [['ban', 'host_regexp=x'], /^svc: unknown ban argument "host_regexp=x": expected host_regex=… path_regex=… surrogate_key=…\n$/],
      [['ban', 'surrogate_key'], /^svc: unknown ban argument "surrogate_key"/],
      [['ban'], /^svc: nothing to ban/],
      [['ban', 'host_regex=a', 'host_regex=b'], /^svc: host_regex is given twice\n$/],
      [['purge'], /^svc: nothing to purge/],
      [['purge', '/relative'], /^svc: not an absolute http:\/\/ or https:\/\/ URL with a host: \/relative\n$/],
      [['purge', 'http://a/', '--file', '-'], /^svc: give URLs as arguments or with --file, not both\n$/],
      [['purge', '--file', join(tmpdir(), 'svc-no-such-file')], /^svc: cannot read /],
      [['refresh', 'ftp://a/'], /^svc: not an absolute/],
      [['purge', 'http://a/', '--output', 'yaml'], /^svc: .*--output/],
    ];
    for (const [args, stderr] of cases) {
      const run = await withToken(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.match(run.stderr, stderr);
      assert.equal(run.stderr.trimEnd().split('\n').length, 1);
    }
    const noToken = await cli(['purge', 'http://a/']);
    assert.equal(noToken.code, 2);
    assert.equal(noToken.stderr, 'svc: no admin token: pass --token <token> or set SVC_ADMIN_TOKEN\n');
  });

  test('API failures exit 1 with the status, code and message on one line', async () => {
    const wrong = await cli(['purge', 'http://a/', '--token', 'wrong-token']);
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, 'svc: purge failed: 401 invalid_token: the bearer token is not the admin token\n');
    assert.ok(!wrong.stderr.includes('wrong-token'));
    const regex = await withToken(['ban', 'host_regex=(']);
    assert.equal(regex.code, 1);
    assert.match(regex.stderr, /^svc: ban failed: 400 invalid_regex: .*host_regex.*\n$/);
  });

  test('an unreachable server is one clear line', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const run = await runCli(['refresh', 'http://a/', '--server', `127.0.0.1:${port}`, '--token', TOKEN]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `svc: refresh failed: unreachable: cannot reach the admin API at http://127.0.0.1:${port}: connection refused (is svc running, and is this its admin address?)\n`);
  });
});
