// The CDN purges not yet confirmed, on disk so that a restart sends them (issue 18): a JSON-lines
// journal beside the invalidation journal (`<warm.path>/invalidation/cdn-pending.jsonl`). A purge is
// appended, fsync'd, before the admin API answers; once the CDN confirmed (or refused) it, a `done`
// line follows, and the file is rewritten with only what is still pending when it opens and whenever
// done records outnumber pending ones. Without a warm tier there is no directory: the records live in
// memory only (docs/cdn.md says what that costs).
import { JsonLinesJournal } from '../store/json-lines-journal.js';
import { CdnError } from './errors.js';
import type { PurgeKind, PurgeTarget } from './purge-mapping.js';

export const PENDING_FILE_NAME = 'cdn-pending.jsonl';

/** A purge waiting for the CDN; `seq` orders them (oldest first) and names them in `done` records. */
export interface PendingPurge extends PurgeTarget {
  seq: number;
  /** When it was queued, ms since the epoch. */
  queuedMs: number;
}

type PendingRecord =
  | { type: 'queued'; seq: number; operation: PurgeTarget['operation']; kind: PurgeKind; value: string; queued_ms: number }
  | { type: 'done'; seqs: number[] };

const OPERATIONS = new Set(['purge', 'ban', 'refresh']);
const KINDS = new Set(['files', 'tags', 'prefixes', 'hosts']);

function parseRecord(line: string): PendingRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const record = (value ?? {}) as Record<string, unknown>;
  if (
    record.type === 'queued' &&
    Number.isSafeInteger(record.seq) &&
    OPERATIONS.has(record.operation as string) &&
    KINDS.has(record.kind as string) &&
    typeof record.value === 'string' &&
    Number.isFinite(record.queued_ms)
  ) {
    return record as PendingRecord;
  }
  if (record.type === 'done' && Array.isArray(record.seqs) && record.seqs.every((seq) => Number.isSafeInteger(seq))) {
    return record as PendingRecord;
  }
  return undefined;
}

function toRecord(purge: PendingPurge): PendingRecord {
  return { type: 'queued', seq: purge.seq, operation: purge.operation, kind: purge.kind, value: purge.value, queued_ms: purge.queuedMs };
}

/** Compaction waits for this many done records at least, so a small queue is not rewritten on every call. */
const MIN_DONE_BEFORE_REWRITE = 1000;

export class PendingPurges {
  readonly #journal: JsonLinesJournal<PendingRecord> | undefined;
  readonly #pending = new Map<number, PendingPurge>();
  #nextSeq = 1;
  #doneSinceRewrite = 0;

  private constructor(journal: JsonLinesJournal<PendingRecord> | undefined) {
    this.#journal = journal;
  }

  /** Opens the journal in `dir` (undefined: memory only) and returns what it still held, oldest first. */
  static async open(dir: string | undefined): Promise<{ store: PendingPurges; pending: PendingPurge[] }> {
    if (dir === undefined) return { store: new PendingPurges(undefined), pending: [] };
    const { journal, records } = await JsonLinesJournal.open<PendingRecord>({
      dir,
      fileName: PENDING_FILE_NAME,
      parse: parseRecord,
      recordName: 'a pending CDN purge record',
      corrupt: (message) => new CdnError('corrupt_pending', message),
      closed: (message) => new Error(message),
    });
    const store = new PendingPurges(journal);
    for (const record of records) {
      if (record.type === 'queued') {
        store.#pending.set(record.seq, { seq: record.seq, operation: record.operation, kind: record.kind, value: record.value, queuedMs: record.queued_ms });
        store.#nextSeq = Math.max(store.#nextSeq, record.seq + 1);
      } else {
        for (const seq of record.seqs) store.#pending.delete(seq);
      }
    }
    const pending = [...store.#pending.values()].sort((a, b) => a.seq - b.seq);
    await journal.rewrite(pending.map(toRecord));
    return { store, pending };
  }

  /** Whether the records outlive the process. */
  get durable(): boolean {
    return this.#journal !== undefined;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Records targets as pending; resolves once they are on disk. */
  async add(targets: readonly PurgeTarget[], queuedMs: number): Promise<PendingPurge[]> {
    const purges = targets.map((target) => ({ ...target, seq: this.#nextSeq++, queuedMs }));
    for (const purge of purges) this.#pending.set(purge.seq, purge);
    await this.#journal?.append(purges.map(toRecord));
    return purges;
  }

  /** Forgets purges the CDN confirmed or refused. */
  async done(seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) this.#pending.delete(seq);
    if (this.#journal === undefined) return;
    this.#doneSinceRewrite += seqs.length;
    if (this.#doneSinceRewrite >= MIN_DONE_BEFORE_REWRITE && this.#doneSinceRewrite > this.#pending.size) {
      this.#doneSinceRewrite = 0;
      await this.#journal.rewrite([...this.#pending.values()].map(toRecord));
    } else {
      await this.#journal.append([{ type: 'done', seqs: [...seqs] }]);
    }
  }

  async close(): Promise<void> {
    await this.#journal?.close();
  }
}
