// Bans and recent purge records on disk, so a restart keeps them (spec §1.1): one JSON object per
// line, appended and fsync'd before an operation answers, and rewritten whole (a temporary file,
// fsync'd, renamed over the journal, the directory fsync'd) when it is opened and after each prune.
// A last line without its newline is a write cut short by a crash: it is ignored. Any other line that
// cannot be read is damage, and opening fails rather than silently forgetting a ban.
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BanSpec } from './invalidator.js';
import { CorruptJournalError, InvalidatorStateError } from './errors.js';

export const JOURNAL_FILE_NAME = 'invalidations.jsonl';

export type JournalRecord =
  | ({ type: 'ban'; id: string; created_ms: number } & BanSpec)
  | { type: 'purge'; key: string; at_ms: number };

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function parseRecord(line: string): JournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
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

/** Reads the journal's records in order; a missing file holds none. Throws CorruptJournalError. */
async function readRecords(path: string): Promise<JournalRecord[]> {
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
    const record = parseRecord(line);
    if (record === undefined) throw new CorruptJournalError(`${path} line ${index + 1} is not an invalidation record`);
    return record;
  });
}

function serialise(records: readonly JournalRecord[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join('');
}

export class InvalidationJournal {
  readonly #dir: string;
  readonly #path: string;
  #handle: FileHandle | undefined;
  /** Journal writes run one at a time, in call order. */
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(dir: string) {
    this.#dir = dir;
    this.#path = join(dir, JOURNAL_FILE_NAME);
  }

  /** Opens the journal in `dir` (created if missing) and returns it with the records it held. */
  static async open(dir: string): Promise<{ journal: InvalidationJournal; records: JournalRecord[] }> {
    await mkdir(dir, { recursive: true });
    const journal = new InvalidationJournal(dir);
    const records = await readRecords(journal.#path);
    // Rewriting at once drops a torn last line, so the next append starts on a line of its own.
    await journal.rewrite(records);
    return { journal, records };
  }

  get path(): string {
    return this.#path;
  }

  /** Appends records and resolves once they are on disk. */
  append(records: readonly JournalRecord[]): Promise<void> {
    return this.#serially(async () => {
      const handle = this.#openHandle();
      await handle.write(serialise(records));
      await handle.datasync();
    });
  }

  /** Replaces the journal's content with `records`, atomically. */
  rewrite(records: readonly JournalRecord[]): Promise<void> {
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
    if (this.#handle === undefined) throw new InvalidatorStateError(`the invalidation journal ${this.#path} is closed`);
    return this.#handle;
  }

  #serially<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
