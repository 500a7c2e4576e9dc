// Issue 15: a 1 GiB origin body streamed through one miss, and svc's memory all along. The body is far
// above max_object_bytes, so the fill passes: it keeps a window of the body, reads the origin as fast
// as its fastest reader, and stores nothing. svc, the origin and the clients each run apart (svc and
// the origin in processes of their own); the clients read as fast as they can and keep nothing.
//
//   npm run build && node dist/bench/miss-memory.js [--mib 1024] [--clients 1]
//
// With several clients they all ask at once, so they share one fill (one origin request). It prints
// figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { freePort, startProcess, waitFor } from './support/processes.js';
import { writeBenchSvcConfig } from './support/svc-config.js';
import { mib, peakRssBytes, rssBytes, RssSampler } from './support/memory.js';

const { values } = parseArgs({ options: { mib: { type: 'string', default: '1024' }, clients: { type: 'string', default: '1' } } });
const bodyBytes = Number(values.mib) * 1024 * 1024;
const clients = Number(values.clients);

const LARGE_SERVER = fileURLToPath(new URL('./servers/large-body-server.js', import.meta.url));
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** Reads one answer to the end, keeping nothing; the bytes it got and when it finished. */
async function readAll(url: string): Promise<{ bytes: number; cacheResult: string; ms: number }> {
  const started = Date.now();
  const response = await request(url);
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) bytes += chunk.length;
  return { bytes, cacheResult: String(response.headers['x-cache']), ms: Date.now() - started };
}

const [originPort, svcPort, adminPort] = [await freePort(), await freePort(), await freePort()];
const dir = await mkdtemp(join(tmpdir(), 'svc-bench-miss-'));
const configPath = await writeBenchSvcConfig(join(dir, 'svc.yaml'), { port: svcPort, adminPort, originPort });
const origin = startProcess(process.execPath, [LARGE_SERVER, String(originPort), String(bodyBytes)]);
const svc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', configPath]);
try {
  await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
  const pid = svc.child.pid!;
  const idle = rssBytes(pid);
  const sampler = new RssSampler([pid]);
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: clients }, () => readAll(`http://127.0.0.1:${svcPort}/large`)));
  const elapsedMs = Date.now() - started;
  const largest = sampler.stop().get(pid) ?? 0;
  console.log(`${mib(bodyBytes)} origin body through one miss, ${clients} client(s), max_object_bytes 8 MiB (default), Node ${process.version}`);
  for (const [i, result] of results.entries()) {
    const rate = result.bytes / 1024 / 1024 / (result.ms / 1000);
    console.log(`client ${i + 1}: ${mib(result.bytes)} (${result.bytes === bodyBytes ? 'whole' : 'SHORT'}), X-Cache ${result.cacheResult}, ${result.ms} ms, ${rate.toFixed(0)} MiB/s`);
  }
  console.log(`svc RSS idle before:        ${mib(idle)}`);
  console.log(`svc RSS largest sampled:    ${mib(largest)} (every 50 ms over ${elapsedMs} ms)`);
  console.log(`svc peak RSS (VmHWM):       ${mib(peakRssBytes(pid))}`);
  console.log(`svc RSS after:              ${mib(rssBytes(pid))}`);
} finally {
  await svc.stop();
  await origin.stop();
  await rm(dir, { recursive: true, force: true });
}
