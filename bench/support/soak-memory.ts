// The node's memory over the soak, sampled every few seconds: the resident set (/proc/<pid>/status
// VmRSS), its anonymous part (/proc/<pid>/smaps_rollup: the heaps, the hot tier's shared memory,
// malloc; not the warm tier's file pages, which the kernel may drop and read again), and from the
// node's /metrics the V8 heaps summed over every thread (used, and the young generation's size), the
// memory V8 knows of outside them (Buffers) and the tiers' figures (svc_hot_store_bytes and _evictions_total,
// svc_warm_store_bytes and _entries).
import { request } from 'undici';
import { anonymousBytes, rssBytes } from './memory.js';

export interface MemorySample {
  atMs: number;
  rssBytes: number;
  anonymousBytes: number;
  heapUsedBytes: number;
  /** The V8 heaps' committed size summed over every thread: what the heaps hold resident, used or not. */
  heapTotalBytes: number;
  /**
   * The young generation's size summed over every thread (V8's new space, both semi-spaces). V8
   * grows it with the rate of allocation, doubling up to 128 MiB a thread: the resident set grows
   * with it, and it is no leak.
   */
  youngGenerationBytes: number;
  /** Memory V8 knows of outside its heaps (Buffers, ArrayBuffers), summed over every thread. */
  externalBytes: number;
  hotBytes: number;
  /** Evictions from the hot tier since start: from the first, its log has gone round once. */
  hotEvictions: number;
  warmBytes: number;
  warmEntries: number;
}

/** The value of a sample (a metric's name and its labels, as exposed) in a text exposition, 0 when absent. */
function metric(text: string, sample: string): number {
  const at = text.indexOf(`\n${sample} `);
  return at === -1 ? 0 : Number(text.slice(at + sample.length + 2, text.indexOf('\n', at + 1)));
}

export class MemorySampler {
  readonly samples: MemorySample[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly pid: number,
    private readonly metricsUrl: string,
  ) {}

  start(everyMs: number): void {
    this.#timer = setInterval(() => (this.#sampling = this.sample()), everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sampling;
  }

  /** One sample now; a failed read of /metrics (the node busy past 5 s) skips the sample. */
  async sample(): Promise<void> {
    try {
      const response = await request(this.metricsUrl, { headersTimeout: 5_000, bodyTimeout: 5_000 });
      const text = await response.body.text();
      this.samples.push({
        atMs: Date.now(),
        rssBytes: rssBytes(this.pid),
        anonymousBytes: anonymousBytes(this.pid),
        heapUsedBytes: metric(text, 'nodejs_heap_size_used_bytes'),
        heapTotalBytes: metric(text, 'nodejs_heap_size_total_bytes'),
        youngGenerationBytes: metric(text, 'nodejs_heap_space_size_total_bytes{space="new"}'),
        externalBytes: metric(text, 'nodejs_external_memory_bytes'),
        hotBytes: metric(text, 'svc_hot_store_bytes'),
        hotEvictions: metric(text, 'svc_hot_store_evictions_total'),
        warmBytes: metric(text, 'svc_warm_store_bytes'),
        warmEntries: metric(text, 'svc_warm_store_entries'),
      });
    } catch {
      // Counted by its absence: the report says how many samples it had.
    }
  }
}
