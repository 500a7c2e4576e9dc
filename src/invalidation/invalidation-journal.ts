// Invalidation state on disk, so a restart keeps it (spec §1.1): one JSON object per line, appended
// and fsync'd before an operation answers, and rewritten whole (a temporary file, fsync'd, renamed
// over the journal, the directory fsync'd) when it is opened and when its owner compacts it. A last
// line without its newline is a write cut short by a crash: it is ignored. Any other line that cannot
// be read is damage, and opening fails rather than silently forgetting a ban.
//
// Appends made while a write is on its way to disk are written together by the next one, with one
// fsync (group commit): a burst of purges costs a few fsyncs, not one each. A rewrite is a barrier: the
// lines appended before it was asked for are written before it, the later ones after it.
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BanSpec } from './invalidator.js';
import { CorruptJournalError, InvalidatorStateError } from './errors.js';

export const JOURNAL_FILE_NAME = 'invalidations.jsonl';

/** Reads one line of a journal: the record, or undefined when the line is not one. */
export type RecordParser<R> = (value: unknown) => R | undefined;

/** Reads the journal's records in order; a missing file holds none. Throws CorruptJournalError. */
async function readRecords<R>(path: string, parse: RecordParser<R>): Promise<R[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const lines = text.split('\n');
  // The piece after the last newline is empty, or a torn write: either way not a record.
  lines.pop();
  return lines.map((line, index) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    const record = parse(value);
    if (record === undefined) throw new CorruptJournalError(`${path} line ${index + 1} is not a record of this journal`);
    return record;
  });
}

function serialise(records: readonly unknown[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join('');
}

/** An append-only file of JSON records, one per line, that its owner rewrites to compact. */
export class LineJournal<R> {
  readonly #dir: string;
  readonly #path: string;
  #handle: FileHandle | undefined;
  /** Journal writes run one at a time, in call order. */
  #tail: Promise<unknown> = Promise.resolve();
  /** Lines appended but not written yet, each with the number of rewrites asked for before it. */
  #pending: { epoch: number; text: string }[] = [];
  /** Rewrites asked for so far. */
  #epoch = 0;

  protected constructor(dir: string, fileName: string) {
    this.#dir = dir;
    this.#path = join(dir, fileName);
  }

  /** Opens the journal `fileName` in `dir` (created if missing) and returns it with the records it held. */
  static async openFile<R>(dir: string, fileName: string, parse: RecordParser<R>): Promise<{ journal: LineJournal<R>; records: R[] }> {
    const journal = new LineJournal<R>(dir, fileName);
    return { journal, records: await journal.load(parse) };
  }

  protected async load(parse: RecordParser<R>): Promise<R[]> {
    await mkdir(this.#dir, { recursive: true });
    const records = await readRecords(this.#path, parse);
    // Rewriting at once drops a torn last line, so the next append starts on a line of its own.
    await this.rewrite(records);
    return records;
  }

  get path(): string {
    return this.#path;
  }

  /** Appends records and resolves once they are on disk. */
  append(records: readonly R[]): Promise<void> {
    const epoch = this.#epoch;
    if (records.length > 0) this.#pending.push({ epoch, text: serialise(records) });
    return this.#serially(async () => {
      // Older epochs were written by earlier runs, so this epoch's lines are a prefix; an earlier run
      // of this epoch may have taken them along already.
      let count = 0;
      while (count < this.#pending.length && this.#pending[count]!.epoch === epoch) count += 1;
      if (count === 0) return;
      const text = this.#pending
        .splice(0, count)
        .map((line) => line.text)
        .join('');
      const handle = this.#openHandle();
      await handle.write(text);
      await handle.datasync();
    });
  }

  /** Replaces the journal's content with `records`, atomically. */
  rewrite(records: readonly R[]): Promise<void> {
    this.#epoch += 1;
    return this.#serially(async () => {
      const temporary = `${this.#path}.tmp`;
      const file = await open(temporary, 'w');
      try {
        await file.write(serialise(records));
        await file.sync();
      } finally {
        await file.close();
      }
      await this.#handle?.close();
      this.#handle = undefined;
      await rename(temporary, this.#path);
      const dir = await open(this.#dir, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
      this.#handle = await open(this.#path, 'a');
    });
  }

  close(): Promise<void> {
    return this.#serially(async () => {
      await this.#handle?.close();
      this.#handle = undefined;
    });
  }

  #openHandle(): FileHandle {
    if (this.#handle === undefined) throw new InvalidatorStateError(`the journal ${this.#path} is closed`);
    return this.#handle;
  }

  #serially<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

export type JournalRecord =
  | ({ type: 'ban'; id: string; created_ms: number } & BanSpec)
  | { type: 'purge'; key: string; at_ms: number };

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function parseRecord(value: unknown): JournalRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (record.type === 'purge' && typeof record.key === 'string' && Number.isFinite(record.at_ms)) {
    return { type: 'purge', key: record.key, at_ms: record.at_ms as number };
  }
  if (
    record.type === 'ban' &&
    typeof record.id === 'string' &&
    Number.isFinite(record.created_ms) &&
    isOptionalString(record.host_regex) &&
    isOptionalString(record.path_regex) &&
    isOptionalString(record.surrogate_key)
  ) {
    return {
      type: 'ban',
      id: record.id,
      created_ms: record.created_ms as number,
      host_regex: record.host_regex as string | undefined,
      path_regex: record.path_regex as string | undefined,
      surrogate_key: record.surrogate_key as string | undefined,
    };
  }
  return undefined;
}

/** The invalidation engine's journal: its bans and its recent purge records. */
export class InvalidationJournal extends LineJournal<JournalRecord> {
  /** Opens the journal in `dir` (created if missing) and returns it with the records it held. */
  static async open(dir: string): Promise<{ journal: InvalidationJournal; records: JournalRecord[] }> {
    const journal = new InvalidationJournal(dir, JOURNAL_FILE_NAME);
    return { journal, records: await journal.load(parseRecord) };
  }
}
