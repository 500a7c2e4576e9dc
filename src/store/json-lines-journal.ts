// An append-only file of JSON records, one per line, that survives crashes: appends are fsync'd
// before they resolve, and the whole file is rewritten (a temporary file, fsync'd, renamed over the
// journal, the directory fsync'd) when it is opened and whenever its owner compacts it. A last line
// without its newline is a write cut short by a crash: it is ignored. Any other line the owner's
// parser refuses is damage, and opening fails rather than silently forgetting a record.
//
// Appends made while a write is on its way to disk are written together by the next one, with one
// fsync (group commit): a burst of purges costs a few fsyncs, not one each. A rewrite is a barrier: the
// lines appended before it was asked for are written before it, the later ones after it.
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export interface JsonLinesJournalOptions<TRecord> {
  /** Directory of the journal, created if missing. */
  dir: string;
  fileName: string;
  /** The record a line holds, or undefined when the line is not one. */
  parse: (line: string) => TRecord | undefined;
  /** What opening throws for a damaged line; `message` names the file and the line. */
  corrupt: (message: string) => Error;
  /** What a line should have been, for that message ("an invalidation record"). */
  recordName: string;
  /** What writing to a closed journal throws: a programmer error in its owner's lifecycle. */
  closed: (message: string) => Error;
}

/** The JSON value of a line, or undefined when it is not JSON (for `parse`). */
export function jsonOfLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

function serialise(records: readonly unknown[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join('');
}

export class JsonLinesJournal<TRecord> {
  readonly #dir: string;
  readonly #path: string;
  readonly #closed: (message: string) => Error;
  #handle: FileHandle | undefined;
  /** Journal writes run one at a time, in call order. */
  #tail: Promise<unknown> = Promise.resolve();
  /** Lines appended but not written yet, each with the number of rewrites asked for before it. */
  #pending: { epoch: number; text: string }[] = [];
  /** Rewrites asked for so far. */
  #epoch = 0;

  private constructor(dir: string, fileName: string, closed: (message: string) => Error) {
    this.#dir = dir;
    this.#path = join(dir, fileName);
    this.#closed = closed;
  }

  /** Opens the journal (created if missing) and returns it with the records it held, in order. */
  static async open<TRecord>(options: JsonLinesJournalOptions<TRecord>): Promise<{ journal: JsonLinesJournal<TRecord>; records: TRecord[] }> {
    await mkdir(options.dir, { recursive: true });
    const journal = new JsonLinesJournal<TRecord>(options.dir, options.fileName, options.closed);
    const records = await readRecords(journal.#path, options);
    // Rewriting at once drops a torn last line, so the next append starts on a line of its own.
    await journal.rewrite(records);
    return { journal, records };
  }

  get path(): string {
    return this.#path;
  }

  /** Appends records and resolves once they are on disk. */
  append(records: readonly TRecord[]): Promise<void> {
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
  rewrite(records: readonly TRecord[]): Promise<void> {
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
    if (this.#handle === undefined) throw this.#closed(`the journal ${this.#path} is closed`);
    return this.#handle;
  }

  #serially<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Reads the journal's records in order; a missing file holds none. Safe beside the process that
 * writes it: a rewrite replaces the file whole, and a line still being appended is not a record yet.
 */
export async function readRecords<TRecord>(path: string, options: JsonLinesJournalOptions<TRecord>): Promise<TRecord[]> {
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
    const record = options.parse(line);
    if (record === undefined) throw options.corrupt(`${path} line ${index + 1} is not ${options.recordName}`);
    return record;
  });
}
