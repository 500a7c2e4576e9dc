// What the soak's clients ask for, request by request: 80% the hot catalogue (Zipf, a tenth of it on
// tenants' hosts), 7% Vary variants, 5% short-lived objects, 8% paths never asked before. Seeded, so
// two runs ask the same things in the same order (the threads and the clock still differ).
import { HOT_KEYS, LANGUAGES, MAIN_HOST, SHORT_KEYS, TENANTS, tenantHost, VARY_KEYS, ZIPF_S, type PathKind } from './soak-content.js';
import { seededRandom } from './median-interval.js';
import { zipfStream } from './zipf.js';

export interface SoakRequest {
  kind: PathKind;
  host: string;
  path: string;
  /** The Accept-Language sent: the variant of a `vary` path, '' for the rest. */
  language: string;
}

/** Ranks drawn in chunks, each a new stream: the CDF is built once per chunk, not per draw. */
class ZipfRanks {
  #chunk: Uint32Array = new Uint32Array(0);
  #at = 0;
  constructor(
    private readonly keys: number,
    private readonly random: () => number,
  ) {}

  next(): number {
    if (this.#at === this.#chunk.length) {
      this.#chunk = zipfStream(65_536, this.keys, ZIPF_S, this.random);
      this.#at = 0;
    }
    return this.#chunk[this.#at++]!;
  }
}

/** How many recent `new` paths the mix remembers for batch purges. */
const RECENT_NEW = 64;

export class SoakMix {
  readonly #random: () => number;
  readonly #hot: ZipfRanks;
  readonly #vary: ZipfRanks;
  readonly #short: ZipfRanks;
  #newPaths = 0;
  readonly #recentNew: string[] = [];

  constructor(seed: number) {
    this.#random = seededRandom(seed);
    this.#hot = new ZipfRanks(HOT_KEYS, this.#random);
    this.#vary = new ZipfRanks(VARY_KEYS, this.#random);
    this.#short = new ZipfRanks(SHORT_KEYS, this.#random);
  }

  next(): SoakRequest {
    const draw = this.#random();
    if (draw < 0.8) {
      const rank = this.#hot.next();
      const host = this.#random() < 0.1 ? tenantHost(rank % TENANTS) : MAIN_HOST;
      return { kind: 'hot', host, path: `/hot/${rank}`, language: '' };
    }
    if (draw < 0.87) {
      const language = LANGUAGES[Math.floor(this.#random() * LANGUAGES.length)]!;
      return { kind: 'vary', host: MAIN_HOST, path: `/vary/${this.#vary.next()}`, language };
    }
    if (draw < 0.92) return { kind: 'short', host: MAIN_HOST, path: `/short/${this.#short.next()}`, language: '' };
    const path = `/new/${this.#newPaths++}`;
    this.#recentNew.push(path);
    if (this.#recentNew.length > RECENT_NEW) this.#recentNew.shift();
    return { kind: 'new', host: MAIN_HOST, path, language: '' };
  }

  /** A popular hot path (drawn as the clients draw them), for a purge or a refresh. */
  popularHotUrl(): string {
    return `http://${MAIN_HOST}/hot/${this.#hot.next()}`;
  }

  /** The last `count` new paths asked for, as URLs. */
  recentNewUrls(count: number): string[] {
    return this.#recentNew.slice(-count).map((path) => `http://${MAIN_HOST}${path}`);
  }
}
