// Issue 32 item 4: a 1 KiB cache HIT over TLS, svc beside nginx configured the same way, in one run on
// one machine: TLS 1.3 + HTTP/1.1 keep-alive (wrk), HTTP/2 (h2load, when svc offers h2), and full
// handshakes per second (openssl s_time -new: no session is resumed).
//
//   npm run build && node dist/bench/tls-hit.js [--rounds 3] [--seconds 10] [--connections 64]
//
// svc runs on its defaults (a data-plane thread per core); nginx runs 2 worker processes with
// proxy_cache in front of the same origin, as ../shared/bench/anchors.sh runs it, with the same
// certificate. The targets are loaded in turn, round after round (the order rotating), and each
// ratio is the median of per-round ratios, each from runs seconds apart. It prints figures; it
// asserts nothing.
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startProcess, waitFor, type Started } from './support/processes.js';
import { requireWrk, runWrkRounds, treeCpuMs } from './support/wrk-rounds.js';
import { median } from './support/median-interval.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const MAKE_CERTS = fileURLToPath(new URL('../../examples/tls/make-certs.sh', import.meta.url));

interface Target {
  name: string;
  port: number;
  server: Started;
}

/** The nginx configuration: anchors.sh's proxy_cache server, on TLS with HTTP/2 (nginx 1.22's syntax). */
function nginxConfig(port: number, originPort: number, dir: string): string {
  return `worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
    sendfile on; tcp_nopush off;
    keepalive_requests 1000000;
    access_log off;
    client_body_temp_path ${dir}/tmp/body; proxy_temp_path ${dir}/tmp/proxy; fastcgi_temp_path ${dir}/tmp/fcgi;
    uwsgi_temp_path ${dir}/tmp/uwsgi; scgi_temp_path ${dir}/tmp/scgi;
    proxy_cache_path ${dir}/cache levels=1:2 keys_zone=bench:10m max_size=1g inactive=60m use_temp_path=off;
    upstream origin { server 127.0.0.1:${originPort}; keepalive 16; }
    server {
        listen 127.0.0.1:${port} ssl http2 backlog=4096;
        ssl_certificate ${dir}/certs/localhost.pem;
        ssl_certificate_key ${dir}/certs/localhost-key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache bench;
            proxy_cache_lock on;
            add_header X-Cache $upstream_cache_status always;
        }
    }
}
`;
}

function svcConfig(port: number, adminPort: number, originPort: number, dir: string): string {
  return [
    `listen: 127.0.0.1:${port}`,
    `tls: { certificates: [{ cert: ${dir}/certs/localhost.pem, key: ${dir}/certs/localhost-key.pem }] }`,
    `admin: { listen: "127.0.0.1:${adminPort}", token: bench-admin-token-0123456789 }`,
    `pools: [{ name: origin, upstreams: ["http://127.0.0.1:${originPort}"] }]`,
    'routes: [{ name: bench, match: { path_prefix: / }, pool: origin }]',
  ].join('\n');
}

/** The ALPN protocol a server picks when offered h2 and http/1.1. */
function alpnOf(port: number): string {
  const out = execFileSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-alpn', 'h2,http/1.1'], { input: '', encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] });
  return /ALPN protocol:\s*(\S+)/.exec(out)?.[1] ?? 'none';
}

function h2load(url: string, durationSeconds: number): { requestsPerSecond: number; requests: number } {
  const out = execFileSync('h2load', ['-t2', '-c16', '-m10', `-D${durationSeconds}`, '--warm-up-time=1', url], { encoding: 'utf8' });
  const rate = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(out);
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded/.exec(out);
  if (!rate || !done) throw new Error(`unexpected h2load output:\n${out}`);
  if (done[1] !== done[2]) throw new Error(`h2load: ${done[1]} done but ${done[2]} succeeded`);
  return { requestsPerSecond: Number(rate[1]), requests: Number(done[1]) };
}

/** Full handshakes per second: 4 `openssl s_time -new` clients side by side for `durationSeconds`. */
async function handshakesPerSecond(port: number, durationSeconds: number): Promise<number> {
  const one = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const child = spawn('openssl', ['s_time', '-connect', `127.0.0.1:${port}`, '-new', '-time', String(durationSeconds)], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('close', () => {
        const match = /(\d+) connections in ([\d.]+) real seconds/.exec(out);
        if (match) resolve(Number(match[1]) / Number(match[2]));
        else reject(new Error(`unexpected s_time output:\n${out}`));
      });
    });
  const rates = await Promise.all([one(), one(), one(), one()]);
  return rates.reduce((sum, rate) => sum + rate, 0);
}

/** Rounds of `measure` over the targets, the order rotating; prints medians and per-round ratios to the first. */
async function rotate(title: string, targets: readonly Target[], measure: (target: Target) => Promise<{ rate: number; cpuUs?: number }>): Promise<void> {
  const rates = new Map<Target, number[]>(targets.map((target) => [target, []]));
  const cpu = new Map<Target, number[]>(targets.map((target) => [target, []]));
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const target = targets[(round + turn) % targets.length]!;
      const figure = await measure(target);
      rates.get(target)!.push(figure.rate);
      if (figure.cpuUs !== undefined) cpu.get(target)!.push(figure.cpuUs);
    }
  }
  console.log(`\n${title}, ${rounds} rounds, medians`);
  const base = rates.get(targets[0]!)!;
  for (const target of targets) {
    const ratios = rates.get(target)!.map((rate, index) => rate / base[index]!);
    const cpuText = cpu.get(target)!.length > 0 ? `${median(cpu.get(target)!).toFixed(1).padStart(8)} µs CPU/req` : '';
    console.log(`${target.name.padEnd(36)} ${median(rates.get(target)!).toFixed(0).padStart(8)} /s ${cpuText}   ${median(ratios).toFixed(3)}x ${targets[0]!.name} (${ratios.map((ratio) => ratio.toFixed(2)).join(' ')})`);
  }
}

requireWrk();
const dir = await mkdtemp(join(tmpdir(), 'svc-tls-bench-'));
// nginx's workers run as an unprivileged user when it is started as root: they must reach the cache.
await chmod(dir, 0o755);
// The origin runs in a process of its own: the load generators below run synchronously in this one.
const originPort = await freePort();
const ORIGIN_SOURCE = `require('node:http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'public, max-age=3600' }); s.end(Buffer.alloc(1024, 'a')); }).listen(${originPort}, '127.0.0.1')`;
const started: Started[] = [startProcess(process.execPath, ['-e', ORIGIN_SOURCE])];
/**
 * Node's own ceiling: node:https (HTTP/1.1) and node:http2 (on a port of its own) in two cluster workers
 * (as anchors.sh's bare Node cluster), answering the same 1 KiB from memory with the same certificate. What svc costs beyond it
 * is svc's; what it costs beyond nginx is Node's TLS.
 */
const bareNodeSource = (port: number, h2Port: number, certs: string): string => `
const cluster = require('node:cluster');
if (cluster.isPrimary) { cluster.fork(); cluster.fork(); }
else {
  const fs = require('node:fs');
  const body = Buffer.alloc(1024, 'a');
  const options = { cert: fs.readFileSync('${certs}/localhost.pem'), key: fs.readFileSync('${certs}/localhost-key.pem') };
  const answer = (q, s) => {
    s.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'public, max-age=3600', 'content-length': 1024 });
    s.end(body);
  };
  require('node:https').createServer({ ...options, ALPNProtocols: ['http/1.1'], keepAliveTimeout: 60000 }, answer).listen(${port}, '127.0.0.1');
  require('node:http2').createSecureServer(options, answer).listen(${h2Port}, '127.0.0.1');
}`;
try {
  execFileSync('sh', [MAKE_CERTS, join(dir, 'certs')], { stdio: 'ignore' });
  await mkdir(join(dir, 'tmp'), { recursive: true });
  const [nginxPort, svcPort, adminPort, barePort, bareH2Port] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  await writeFile(join(dir, 'nginx.conf'), nginxConfig(nginxPort, originPort, dir));
  await writeFile(join(dir, 'svc.yaml'), svcConfig(svcPort, adminPort, originPort, dir));
  const nginx = startProcess('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;']);
  started.push(nginx);
  const svc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', join(dir, 'svc.yaml')]);
  started.push(svc);
  // A file, not `-e`: cluster workers run the primary's script again.
  await writeFile(join(dir, 'bare-node.cjs'), bareNodeSource(barePort, bareH2Port, join(dir, 'certs')));
  const bare = startProcess(process.execPath, [join(dir, 'bare-node.cjs')]);
  started.push(bare);
  await waitFor(`http://127.0.0.1:${originPort}/small`);
  await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
  const targets: Target[] = [
    { name: 'nginx 1.22 (2 workers)', port: nginxPort, server: nginx },
    { name: 'svc (defaults)', port: svcPort, server: svc },
    { name: 'bare node:https (cluster x2)', port: barePort, server: bare },
  ];
  const bareH2: Target = { name: 'bare node:http2 (cluster x2)', port: bareH2Port, server: bare };
  for (const target of targets) {
    // Stores the object: every request measured below is a HIT.
    const status = execFileSync('curl', ['-sk', '--retry', '10', '--retry-connrefused', '--retry-delay', '1', '-o', '/dev/null', '-w', '%{http_code}', `https://127.0.0.1:${target.port}/small`], { encoding: 'utf8' });
    if (status !== '200') throw new Error(`${target.name} answered ${status} to the warming request`);
    console.log(`${target.name}: ALPN offered h2,http/1.1 → ${alpnOf(target.port)}`);
  }

  runWrkRounds(
    targets.map((target) => ({ name: `${target.name}, TLS 1.3 + HTTP/1.1`, url: `https://127.0.0.1:${target.port}/small`, server: target.server })),
    { rounds, seconds, connections },
    '1 KiB HIT, TLS 1.3 + HTTP/1.1 keep-alive',
  );

  // The bare Node HTTP/1.1 server is replaced by its HTTP/2 twin here.
  const h2Targets = [...targets, bareH2].filter((target) => alpnOf(target.port) === 'h2');
  if (h2Targets.some((target) => target.server === svc)) {
    await rotate('1 KiB HIT, HTTP/2 (h2load -t2 -c16 -m10, TLS 1.3)', h2Targets, async (target) => {
      const before = treeCpuMs(target.server.child.pid!);
      const load = h2load(`https://127.0.0.1:${target.port}/small`, seconds);
      return { rate: load.requestsPerSecond, cpuUs: ((treeCpuMs(target.server.child.pid!) - before) * 1000) / Math.max(1, load.requests) };
    });
  } else {
    console.log('\nHTTP/2: not measured, svc does not offer h2 on this build');
  }

  await rotate('Full TLS 1.3 handshakes (openssl s_time -new, 4 clients)', targets, async (target) => ({ rate: await handshakesPerSecond(target.port, Math.min(seconds, 5)) }));
} finally {
  for (const server of started) await server.stop();
  await rm(dir, { recursive: true, force: true });
}
