// The registry of entries served from cache on refresh-enabled routes: per variant (primary key and
// variant key), its route, its hits in the current lifetime, the request that refetches it and its
// pending refresh. Bounded: adding a record beyond `maxRecords` evicts the least recently hit one, so
// a scan of many distinct URLs cannot grow it; popular entries are hit again and stay.
import type { RefetchRequest } from './refetch-request.js';
import { requireInRange } from './errors.js';

export interface RegistryRecord {
  /** `key` and `variantKey` joined by NUL, which neither contains. */
  readonly id: string;
  readonly key: string;
  readonly variantKey: string;
  /** Route label (the `route` metric label) the entry was served through. */
  readonly route: string;
  request: RefetchRequest;
  /** Times the entry was served from cache since it was stored or last refreshed. */
  hits: number;
  /** response_time of the stored entry this record describes: another value means another lifetime. */
  entryStampMs: number;
  /** When that entry stops being fresh, ms since the epoch. */
  expiresAtMs: number;
  /** When its pending refresh is due; undefined when none is pending. */
  dueAtMs: number | undefined;
  /** The refresh came due before the entry had enough hits: reaching them schedules it at once. */
  waitingForHits: boolean;
}

export function recordId(key: string, variantKey: string): string {
  return `${key}\u0000${variantKey}`;
}

export class RefreshRegistry {
  /** Insertion order is recency order: a hit moves its record to the end. */
  readonly #records = new Map<string, RegistryRecord>();
  readonly #perRoute = new Map<string, number>();
  readonly #maxRecords: number;

  constructor(maxRecords: number) {
    this.#maxRecords = requireInRange('maxRecords', maxRecords, 1, 10_000_000);
  }

  get size(): number {
    return this.#records.size;
  }

  /** Records of one route, for svc_refresh_registry_size. */
  sizeOf(route: string): number {
    return this.#perRoute.get(route) ?? 0;
  }

  get(id: string): RegistryRecord | undefined {
    return this.#records.get(id);
  }

  /** Marks the record as the most recently hit. */
  touch(record: RegistryRecord): void {
    this.#records.delete(record.id);
    this.#records.set(record.id, record);
  }

  /** Adds a record (replacing one with the same id); answers the record evicted to make room, if any. */
  add(record: RegistryRecord): RegistryRecord | undefined {
    const replaced = this.#records.get(record.id);
    if (replaced) this.#forget(replaced);
    let evicted: RegistryRecord | undefined;
    if (this.#records.size >= this.#maxRecords) {
      const oldest = this.#records.values().next().value;
      if (oldest !== undefined) {
        this.#forget(oldest);
        evicted = oldest;
      }
    }
    this.#records.set(record.id, record);
    this.#perRoute.set(record.route, this.sizeOf(record.route) + 1);
    return evicted;
  }

  /** Every record, least recently hit first. */
  records(): IterableIterator<RegistryRecord> {
    return this.#records.values();
  }

  #forget(record: RegistryRecord): void {
    this.#records.delete(record.id);
    this.#perRoute.set(record.route, this.sizeOf(record.route) - 1);
  }
}
