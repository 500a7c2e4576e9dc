// Issue 2 item 10, measured without the machine's noise: the instructions a 1 KiB cache HIT costs
// in svc, beside the same answer from a bare Node `http` server, counted by valgrind's callgrind.
// Throughput on a shared machine drifts by tens of percent within a minute; an instruction count
// per request repeats to within a few percent, so it shows what a change to the hit path saved.
// It counts user-space instructions only (not the kernel's share of each request, the same for both
// servers) and no cache misses, so it bounds the throughput ratio from above; hit-throughput.ts
// measures the ratio itself.
//
//   npm run build && node dist/bench/hit-instructions.js [--requests 3000] [--warm-up 40000]
//       [--tracing-rate 0.01] [--svc-cli path/to/another/build/dist/src/cli/main.js]
//
// `--tracing-rate` turns tracing on at that sampling rate, exporting to a stand-in collector (issue
// 19: what tracing costs a hit); `--svc-cli` counts another build of svc (main's, say) instead.
//
// Needs valgrind (Debian: apt-get install -y valgrind). Each server runs alone under callgrind and
// gets one load over the same keep-alive connections: `--warm-up` requests, the counters zeroed,
// then `--requests` counted. svc has far more code to optimise than the bare server: with
// `--trace-opt` V8 was still finishing optimisations after 8,000 hits, and the connections a new
// load opens run code (and deoptimise functions) that a hit does not. Counting those made svc's
// helper threads look busier than its main thread. The "all threads" column shows that the window
// is clean: compiler threads still at work make it far exceed the main thread's count.
// It prints figures; it asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freePort, startProcess, waitFor, type Started } from './support/processes.js';
import { writeBenchSvcConfig } from './support/svc-config.js';
import { hitFields } from './support/hit-fields.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    'warm-up': { type: 'string', default: '40000' },
    'tracing-rate': { type: 'string' },
    'svc-cli': { type: 'string' },
  },
});
const requests = Number(values.requests);
const warmUpRequests = Number(values['warm-up']);
// Few connections: under valgrind a server answers a few hundred requests a second.
const CONNECTIONS = 10;

const FIXED_SERVER = fileURLToPath(new URL('./servers/fixed-body-server.js', import.meta.url));
const SVC_CLI = values['svc-cli'] ?? fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const OTLP_SINK = fileURLToPath(new URL('./servers/otlp-sink-server.js', import.meta.url));

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('hit-instructions: valgrind is not installed (Debian: apt-get install -y valgrind)');
  process.exit(2);
}

interface Count {
  /** Instructions per request on the thread that runs JavaScript. */
  mainThread: number;
  /** Also V8's compiler and GC helper threads and libuv's thread pool. */
  allThreads: number;
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-instructions-'));

/** Runs one server under callgrind and counts the instructions `requests` hits on `url` cost. */
async function count(name: string, args: string[], url: string): Promise<Count> {
  const out = join(dir, `${name}.callgrind`);
  const server: Started = startProcess('valgrind', [
    '--quiet',
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${out}`,
    process.execPath,
    ...args,
  ]);
  try {
    await waitFor(url, 120_000);
    // One run over the same keep-alive connections: the counters are zeroed at the warm-up's last
    // response, so what is counted is hits only, with no connection opened or closed among them
    // (a new connection runs code a hit does not, and that V8 may still be optimising).
    await new Promise<void>((resolve, reject) => {
      let answered = 0;
      const run = autocannon({ url, connections: CONNECTIONS, amount: warmUpRequests + requests }, (error) => (error ? reject(error) : resolve()));
      run.on('response', () => {
        answered += 1;
        if (answered === warmUpRequests) execFileSync('callgrind_control', ['--zero', String(server.child.pid)], { stdio: 'ignore' });
      });
    });
    execFileSync('callgrind_control', ['--dump', String(server.child.pid)], { stdio: 'ignore' });
  } finally {
    await server.stop();
  }
  // The dump is one file per thread: <out>.1-01 (the main thread), <out>.1-02…
  const dumps = (await readdir(dir)).filter((file) => file.startsWith(`${name}.callgrind.1-`)).sort();
  const perThread = await Promise.all(dumps.map(async (file) => summary(await readFile(join(dir, file), 'utf8'))));
  return { mainThread: perThread[0]! / requests, allThreads: perThread.reduce((a, b) => a + b, 0) / requests };
}

function summary(dump: string): number {
  const line = dump.split('\n').find((l) => l.startsWith('summary:'));
  if (!line) throw new Error('a callgrind dump without a summary line');
  return Number(line.split(' ')[1]);
}

const [originPort, barePort, svcPort, adminPort, sinkPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
const tracingRate = values['tracing-rate'];
const configPath = await writeBenchSvcConfig(join(dir, 'svc.yaml'), {
  port: svcPort,
  adminPort,
  originPort,
  extra: tracingRate === undefined ? [] : [`tracing: { endpoint: "127.0.0.1:${sinkPort}", sampling_rate: ${tracingRate} }`],
});
const origin = startProcess(process.execPath, [FIXED_SERVER, String(originPort), '1024']);
const sink = tracingRate === undefined ? undefined : startProcess(process.execPath, [OTLP_SINK, String(sinkPort)]);
try {
  await waitFor(`http://127.0.0.1:${originPort}/hit`);
  // The ceiling answers the same bytes as svc's HIT: read its fields off a svc run outside valgrind.
  const plainSvc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPath]);
  let fields: Record<string, string | string[]>;
  try {
    await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
    fields = await hitFields(`http://127.0.0.1:${svcPort}/hit`);
  } finally {
    await plainSvc.stop();
  }
  const bare = await count('bare', [FIXED_SERVER, String(barePort), '1024', JSON.stringify(fields)], `http://127.0.0.1:${barePort}/hit`);
  const svc = await count('svc', [SVC_CLI, 'serve', '--config', configPath], `http://127.0.0.1:${svcPort}/hit`);
  const variant = `${values['svc-cli'] === undefined ? 'this build' : values['svc-cli']}, tracing ${tracingRate === undefined ? 'off' : `on at ${tracingRate}`}`;
  console.log(`\n1024-byte body, ${requests} requests counted after ${warmUpRequests} to warm up, Node ${process.version}; svc: ${variant}\n`);
  console.log('instructions per request      main thread   all threads');
  for (const [name, figures] of [['bare node http (ceiling)', bare], ['svc HIT (hot tier)', svc]] as const) {
    console.log(`${name.padEnd(28)} ${figures.mainThread.toFixed(0).padStart(12)}   ${figures.allThreads.toFixed(0).padStart(11)}`);
  }
  console.log(`\nbare / svc, main thread: ${(bare.mainThread / svc.mainThread).toFixed(3)}x (the ratio if time followed instructions)`);
} finally {
  await Promise.all([origin.stop(), sink?.stop()]);
  await rm(dir, { recursive: true, force: true });
}
