// Issue 22: what a warm lookup costs a data-plane worker, which reads the primary's warm tier from
// lmdb without its index (src/store/warm/warm-reader.ts: a range read over the key's id prefix, then
// the records), beside the owner's lookup (the in-memory index, then the record). Both read the same
// real environment, here from one process: the memory map is the same pages either way.
//
//   npm run build && node dist/bench/warm-reader.js [--entries 100000] [--lookups 200000] [--body 1024] [--rounds 3]
//
// It prints figures; it asserts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { benchEntry } from './support/bench-entry.js';
import { WarmReader } from '../src/store/warm/warm-reader.js';
import { openWarmStore } from '../src/store/warm/warm-store.js';
import { seededRandom } from './support/median-interval.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    lookups: { type: 'string', default: '200000' },
    body: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '3' },
  },
});
const entries = Number(values.entries);
const lookups = Number(values.lookups);
const bodyBytes = Number(values.body);
const rounds = Number(values.rounds);

const path = await mkdtemp(join(tmpdir(), 'svc-bench-warm-reader-'));
const owner = await openWarmStore({ path, maxBytes: entries * (bodyBytes + 512), writeQueueLength: entries });
const body = Buffer.alloc(bodyBytes, 0x61);
const keyOf = (i: number): string => `https://example.com/objects/${i}`;
for (let i = 0; i < entries; i++) owner.put(benchEntry({ key: keyOf(i), body, requestTimeMs: Date.now() }));
await owner.flush();
const reader = WarmReader.open(path);

const next = seededRandom(22);
const picks = Array.from({ length: lookups }, () => keyOf(Math.floor(next() * entries)));

function timeLookups(lookup: (key: string) => number): number {
  let found = 0;
  const started = performance.now();
  for (const key of picks) found += lookup(key);
  const seconds = (performance.now() - started) / 1000;
  if (found !== lookups) throw new Error(`found ${found} of ${lookups}`);
  return lookups / seconds;
}

const ownerRates: number[] = [];
const readerRates: number[] = [];
for (let round = 0; round < rounds; round++) {
  // peek: the owner's read without the recency touch a worker sends in batches instead.
  ownerRates.push(timeLookups((key) => owner.peek(key).length));
  readerRates.push(timeLookups((key) => reader.variantsOf(key).entries.length));
}
const median = (rates: number[]): number => [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!;
const format = (rate: number): string => `${Math.round(rate).toLocaleString('en-US')}/s`;
console.log(`${entries.toLocaleString('en-US')} entries of ${bodyBytes} B, ${lookups.toLocaleString('en-US')} random lookups, medians of ${rounds} rounds`);
console.log(`owner (index, then record):   ${format(median(ownerRates))}  (${ownerRates.map(format).join(', ')})`);
console.log(`worker (prefix range, record): ${format(median(readerRates))}  (${readerRates.map(format).join(', ')})`);
console.log(`worker / owner: ${(median(readerRates) / median(ownerRates)).toFixed(2)}x`);
await reader.close();
await owner.close();
await rm(path, { recursive: true, force: true });
