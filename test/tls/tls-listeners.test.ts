// Issue 32 part 1: svc terminates TLS on its data plane and its admin listener. One node on the
// defaults (a data-plane thread per core) with real certificates made by openssl: SNI picks among
// them, ALPN says h2 or http/1.1, TLS 1.0 and 1.1 are refused, a reload serves new certificates to new
// connections on every thread while an open one keeps working, a certificate with 10 days left is a
// WARN line and a metric, the admin API speaks TLS with a Secure session cookie, the access log has
// the connection's TLS, the cache keys a TLS request as https, and hostile handshakes harm nothing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:https';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseConfig } from '../../src/config/index.js';
import { checkStartup } from '../../src/node/startup-checks.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { parseExposition, valueOf } from '../support/svc-metrics.js';
import { httpsGet, issueCertificate, makeTestCa, type TestCa, type TestCertificate } from '../support/test-certificates.js';

const TOKEN = 'test-admin-token-0123456789';
const DAY_S = 86_400;

/** A TLS connection to `port` on 127.0.0.1 trusting `ca`; resolves once the handshake is done. */
async function handshake(port: number, options: ConnectionOptions): Promise<TLSSocket> {
  const socket = connectTls({ host: '127.0.0.1', port, ...options });
  await once(socket, 'secureConnect');
  return socket;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

describe('TLS listeners', () => {
  let dir: string;
  let ca: TestCa;
  let local: TestCertificate;
  let other: TestCertificate;
  let soon: TestCertificate;
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let dataPort: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-tls-'));
    ca = await makeTestCa(dir);
    [local, other, soon] = await Promise.all([
      issueCertificate(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 30 }),
      issueCertificate(ca, 'other', { dnsNames: ['other.test', '*.wild.test'], days: 30 }),
      issueCertificate(ca, 'soon', { dnsNames: ['soon.test'], days: 10 }),
    ]);
    const admin = await issueCertificate(ca, 'admin', { dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 30 });
    origin = await startTestOrigin((request) =>
      request.url === '/missing' ? { status: 404, body: 'no' } : { headers: { 'cache-control': 'max-age=60' }, body: `body of ${request.url}` },
    );
    const pair = (certificate: TestCertificate): { cert: string; key: string } => ({ cert: certificate.certFile, key: certificate.keyFile });
    svc = await startSvc([origin.url], {
      reloadable: true,
      config: {
        tls: { certificates: [pair(local), pair(other), pair(soon)] },
        admin: { listen: '127.0.0.1:0', token: TOKEN, tls: { certificates: [pair(admin)] } },
        // The handshake shares the header timeout: a stalled one is cut within a second here.
        limits: { header_timeout: '1s' },
      },
    });
    dataPort = portOf(svc.dataUrl);
  });

  after(async () => {
    await svc?.stop();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the listeners say https, and the node runs on its default threads', () => {
    assert.match(svc.dataUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(svc.adminUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(svc.node.workers > 1 || process.env.SVC_TEST_WORKERS === '1', `workers: ${svc.node.workers}`);
  });

  test('SNI picks the certificate holding the name asked for; the first serves a client that names none of them', async () => {
    const serialFor = async (servername: string | undefined): Promise<string> => {
      const socket = await handshake(dataPort, { ca: ca.pem, servername, checkServerIdentity: () => undefined });
      const serial = socket.getPeerCertificate().serialNumber;
      socket.destroy();
      return serial;
    };
    assert.equal(await serialFor('localhost'), local.serial);
    assert.equal(await serialFor('other.test'), other.serial);
    assert.equal(await serialFor('SOON.test'), soon.serial);
    assert.equal(await serialFor('a.wild.test'), other.serial, 'a wildcard name covers one label');
    assert.equal(await serialFor('unknown.test'), local.serial);
    assert.equal(await serialFor(undefined), local.serial);
  });

  test('ALPN answers h2 to a client offering h2 and http/1.1, http/1.1 to one offering only that', async () => {
    const socket = await handshake(dataPort, { ca: ca.pem, servername: 'localhost', ALPNProtocols: ['h2', 'http/1.1'] });
    assert.equal(socket.alpnProtocol, 'h2');
    socket.destroy();
    const http1 = await handshake(dataPort, { ca: ca.pem, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    assert.equal(http1.alpnProtocol, 'http/1.1');
    http1.destroy();
  });

  test('TLS 1.2 and 1.3 are spoken; 1.0 and 1.1 are refused with a protocol_version alert', async () => {
    for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
      const socket = await handshake(dataPort, { ca: ca.pem, servername: 'localhost', minVersion: version, maxVersion: version });
      assert.equal(socket.getProtocol(), version);
      socket.destroy();
    }
    for (const version of ['TLSv1', 'TLSv1.1'] as const) {
      // The client allows it (security level 0), so a refusal is the server's.
      const socket = connectTls({ host: '127.0.0.1', port: dataPort, minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0', rejectUnauthorized: false });
      const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
      assert.equal(error.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', `${version}: ${error.message}`);
    }
  });

  test('a request over TLS is keyed https: the http key of the same URL holds nothing', async () => {
    const url = `https://localhost:${dataPort}/keyed`;
    const first = await httpsGet(url, { ca: ca.pem, servername: 'localhost' });
    const second = await httpsGet(url, { ca: ca.pem, servername: 'localhost' });
    assert.deepEqual([first.status, first.headers['x-cache'], second.headers['x-cache']], [200, 'MISS', 'HIT']);
    const check = async (checked: string): Promise<{ key: string; hit: boolean }> => {
      const answer = await httpsGet(`${svc.adminUrl}/v1/debug/cachecheck?url=${encodeURIComponent(checked)}`, { ca: ca.pem, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(answer.status, 200, answer.body);
      return JSON.parse(answer.body) as { key: string; hit: boolean };
    };
    const https = await check(url);
    const http = await check(url.replace('https:', 'http:'));
    assert.equal(https.hit, true);
    assert.equal(http.hit, false);
    assert.notEqual(https.key, http.key);
  });

  test("the access log records the connection's TLS version, cipher and ALPN protocol, and its own address", async () => {
    const answer = await httpsGet(`https://localhost:${dataPort}/missing`, { ca: ca.pem, servername: 'localhost' });
    assert.equal(answer.status, 404);
    const line = await svc.logs.find('the access record of /missing', (entry) => entry.msg === 'access' && entry.path === '/missing');
    assert.equal(line.tls_version, 'TLSv1.3');
    assert.match(String(line.tls_cipher), /^TLS_(AES|CHACHA20)_\w+$/);
    assert.equal(line.tls_alpn, 'http/1.1');
    assert.match(String(line.remote), /^127\.0\.0\.1:\d+$/);
  });

  test('a certificate with 10 days left is a WARN line and svc_tls_certificate_expiry_seconds', async () => {
    const warned = await svc.logs.find('the expiry warning', (line) => line.msg === 'TLS certificate expires in less than 14 days' && line.certificate === 'soon.test');
    assert.equal(warned.level, 'warn');
    assert.equal(warned.listener, 'data');
    assert.equal(svc.logs.lines.some((line) => String(line.msg).startsWith('TLS certificate') && line.certificate === 'other.test'), false, 'a certificate with 30 days left is not warned of');
    const metrics = parseExposition((await httpsGet(`${svc.adminUrl}/metrics`, { ca: ca.pem })).body);
    const left = (name: string, listener = 'data'): number => valueOf(metrics, 'svc_tls_certificate_expiry_seconds', 'svc_tls_certificate_expiry_seconds', { listener, name });
    assert.ok(left('soon.test') > 9 * DAY_S && left('soon.test') <= 10 * DAY_S, `soon.test: ${left('soon.test')} s`);
    assert.ok(left('other.test') > 29 * DAY_S && left('other.test') <= 30 * DAY_S, `other.test: ${left('other.test')} s`);
    assert.ok(left('localhost', 'admin') > 29 * DAY_S, 'the admin listener has its own series');
  });

  test('the admin API speaks TLS, and the dashboard session cookie is Secure there', async () => {
    const health = await httpsGet(`${svc.adminUrl}/healthz`, { ca: ca.pem });
    assert.equal(health.status, 200);
    const login = await httpsGet(`${svc.adminUrl}/dashboard/login`, {
      ca: ca.pem,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}&next=%2Fdashboard%2F`,
    });
    assert.equal(login.status, 303);
    const cookie = String(login.headers['set-cookie']);
    assert.match(cookie, /^svc_session=/);
    assert.match(cookie, /; Secure(;|$)/);
  });

  test('garbage instead of a ClientHello, or a handshake that stops halfway, is cut and harms nothing', async () => {
    const garbage = connectTcp({ host: '127.0.0.1', port: dataPort });
    garbage.on('error', () => undefined);
    garbage.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    garbage.resume();
    // A TLS record header announcing a ClientHello of 512 bytes, then nothing: the handshake timeout cuts it.
    const stalled = connectTcp({ host: '127.0.0.1', port: dataPort });
    stalled.on('error', () => undefined);
    stalled.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc]));
    stalled.resume();
    await Promise.all([once(garbage, 'close'), once(stalled, 'close')]);
    const answer = await httpsGet(`https://localhost:${dataPort}/after-hostile`, { ca: ca.pem, servername: 'localhost' });
    assert.equal(answer.status, 200);
    assert.equal(svc.node.dataPlaneThreads?.restarts ?? 0, 0, 'no data-plane thread died');
  });

  test('a reload serves a new certificate to new connections on every thread; an open keep-alive connection keeps working', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const url = `https://localhost:${dataPort}/kept`;
      const before = await httpsGet(url, { ca: ca.pem, servername: 'localhost', agent });
      assert.equal(before.serial, local.serial);
      const renewed = await issueCertificate(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 60 });
      assert.equal(new X509Certificate(await readFile(local.certFile)).serialNumber, renewed.serial, 'the file under the same path is the new one');
      assert.deepEqual(await svc.node.reload(), { status: 'reloaded', changed: ['tls'] });
      // Connections land on the threads as the kernel hashes them: 16 reach each of 2 threads but 1 time in 32,768.
      for (let i = 0; i < 16; i++) {
        const fresh = await httpsGet(url, { ca: ca.pem, servername: 'localhost' });
        assert.equal(fresh.serial, renewed.serial, `new connection ${i}`);
      }
      const kept = await httpsGet(url, { ca: ca.pem, servername: 'localhost', agent });
      assert.equal(kept.status, 200);
      assert.equal(kept.localPort, before.localPort, 'the same connection');
      assert.equal(kept.serial, local.serial, 'it keeps the certificate it was made with');
      // Unchanged files: nothing to reload.
      assert.deepEqual(await svc.node.reload(), { status: 'unchanged', changed: [] });
    } finally {
      agent.destroy();
    }
  });
});

describe('TLS configuration', () => {
  let dir: string;
  let ca: TestCa;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-tls-config-'));
    ca = await makeTestCa(dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const config = (tls: unknown, adminTls?: unknown): ReturnType<typeof parseConfig> =>
    parseConfig({
      tls,
      admin: adminTls === undefined ? {} : { tls: adminTls },
      pools: [{ name: 'o', upstreams: ['http://127.0.0.1:9'] }],
      routes: [{ name: 'r', pool: 'o' }],
    });

  test('a certificate file that cannot be read fails validation naming its key', async () => {
    const good = await issueCertificate(ca, 'good', { dnsNames: ['localhost'], days: 30 });
    const issues = await checkStartup(config({ certificates: [{ cert: good.certFile, key: good.keyFile }] }, { certificates: [{ cert: join(dir, 'absent.pem'), key: good.keyFile }] }), {});
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]!.path, 'admin.tls.certificates[0].cert');
    assert.match(issues[0]!.message, /absent\.pem.*no such file or directory \(ENOENT\)/);
  });

  test('a key that is not the certificate\'s, or a file that holds no certificate, fails validation naming its key', async () => {
    const [a, b] = await Promise.all([issueCertificate(ca, 'a', { dnsNames: ['a.test'], days: 30 }), issueCertificate(ca, 'b', { dnsNames: ['b.test'], days: 30 })]);
    const issues = await checkStartup(config({ certificates: [{ cert: a.certFile, key: a.keyFile }, { cert: a.certFile, key: b.keyFile }, { cert: a.keyFile, key: a.keyFile }] }), {});
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ['tls.certificates[1].key', 'tls.certificates[2].cert'],
    );
    assert.match(issues[0]!.message, /is not the key of the certificate/);
    assert.match(issues[1]!.message, /holds no PEM certificate/);
  });

  test('a tls block without certificates, or with a key that is not built, is refused', () => {
    assert.throws(() => config({ certificates: [] }), /tls\.certificates/);
    assert.throws(() => config({ certificates: [{ cert: 'a.pem', key: 'a-key.pem' }], min_version: 'TLSv1.3' }), /tls\.min_version/);
  });
});
