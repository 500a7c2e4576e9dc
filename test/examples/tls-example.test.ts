// Issue 32 item 6: examples/tls/ works as the README says. make-certs.sh writes a CA and a certificate
// for localhost and 127.0.0.1 (here into a temporary copy of the example's directory), the example
// configuration validates, and `svc serve --config examples/tls/svc.yaml` in front of the demo origin
// answers `curl --http2 --cacert examples/tls/ca.pem https://localhost:8443/hello` with MISS, then HIT.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../src/config/index.js';
import { eventually } from '../support/eventually.js';
import { httpsGet } from '../support/test-certificates.js';
import { busyPort, takeExamplePorts } from '../support/example-ports.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const ORIGIN = join(REPO, 'dist', 'examples', 'demo', 'origin.js');
const MAKE_CERTS = join(REPO, 'examples', 'tls', 'make-certs.sh');
const CONFIG = join(REPO, 'examples', 'tls', 'svc.yaml');
const TOKEN = 'tls-example-test-token-0123456789';


async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe('examples/tls', () => {
  // svc.yaml names its files relative to where svc starts: a temporary directory holds examples/tls/.
  let cwd: string;
  let certs: string;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'svc-tls-example-'));
    certs = join(cwd, 'examples', 'tls');
    await mkdir(certs, { recursive: true });
  });
  after(() => rm(cwd, { recursive: true, force: true }));

  test('make-certs.sh writes a CA and a certificate for localhost and 127.0.0.1 that it signed', async () => {
    const made = spawnSync(MAKE_CERTS, [certs], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const ca = new X509Certificate(await readFile(join(certs, 'ca.pem')));
    const leaf = new X509Certificate(await readFile(join(certs, 'localhost.pem')));
    assert.ok(leaf.verify(ca.publicKey), 'signed by the CA');
    assert.equal(leaf.checkIssued(ca), true);
    assert.equal(leaf.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1');
    assert.equal(leaf.checkHost('localhost'), 'localhost');
    assert.equal(leaf.checkIP('127.0.0.1'), '127.0.0.1');
  });

  test('the example configuration validates: TLS on 8443 and 9443, forwarding to the demo origin', async () => {
    const validated = spawnSync(process.execPath, [CLI, 'config', 'validate', CONFIG], { cwd, encoding: 'utf8' });
    assert.equal(validated.status, 0, `${validated.stdout}${validated.stderr}`);
    const config = await loadConfigFile(CONFIG);
    assert.equal(config.listen, '127.0.0.1:8443');
    assert.equal(config.admin.listen, '127.0.0.1:9443');
    assert.deepEqual(config.pools[0]!.upstreams, ['http://127.0.0.1:8081']);
    assert.equal(config.tls?.certificates.length, 1);
    assert.equal(config.admin.tls?.certificates.length, 1);
  });

  test('svc serve answers curl --http2 --cacert … https://localhost:8443/hello with MISS, then HIT', async (context) => {
    const release = await takeExamplePorts();
    const busy = await busyPort([8081, 8443, 9443]);
    if (busy !== undefined) {
      await release();
      context.skip(`${busy} is in use, and the example needs its fixed ports`);
      return;
    }
    const ca = await readFile(join(certs, 'ca.pem'), 'utf8');
    let origin: ChildProcess | undefined;
    let svc: ChildProcess | undefined;
    let output = '';
    try {
      origin = spawn(process.execPath, [ORIGIN], { cwd, stdio: 'ignore' });
      svc = spawn(process.execPath, [CLI, 'serve', '--config', CONFIG], { cwd, env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
      svc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      svc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await eventually('the node ready over TLS', () => httpsGet('https://127.0.0.1:9443/readyz', { ca }), (answer) => answer.status === 200, {
        tolerateErrors: true,
        timeoutMs: 30_000,
        detail: () => output,
      });
      await eventually('the demo origin', () => fetch('http://127.0.0.1:8081/hello'), (answer) => answer.ok, { tolerateErrors: true });
      // The README's curl asks for HTTP/2 (ALPN h2), which a curl built with nghttp2 speaks.
      const http2 = /^Features:.*\bHTTP2\b/m.test(spawnSync('curl', ['-V'], { encoding: 'utf8' }).stdout);
      const curl = (): string => {
        const args = ['-s', ...(http2 ? ['--http2'] : []), '-D', '-', '-o', '/dev/null', '--cacert', 'examples/tls/ca.pem', 'https://localhost:8443/hello'];
        const ran = spawnSync('curl', args, { cwd, encoding: 'utf8' });
        assert.equal(ran.status, 0, ran.stderr);
        if (http2) assert.match(ran.stdout, /^HTTP\/2 200/, 'curl and svc agreed on h2');
        return /^x-cache: (\w+)/im.exec(ran.stdout)?.[1] ?? ran.stdout;
      };
      assert.equal(curl(), 'MISS');
      assert.equal(curl(), 'HIT');
    } finally {
      await stop(svc);
      await stop(origin);
      await release();
    }
  });
});
