// Bans and recent purge records on disk, so a restart keeps them (spec §1.1): a JSON-lines journal
// (src/store/json-lines-journal.ts), appended and fsync'd before an operation answers and rewritten
// whole when it is opened and after each prune. A damaged line before the last one stops the node
// from starting rather than silently forgetting a ban.
import { join } from 'node:path';
import { jsonOfLine, JsonLinesJournal, readRecords, type JsonLinesJournalOptions } from '../store/json-lines-journal.js';
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
  const value = jsonOfLine(line);
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

export type InvalidationJournal = JsonLinesJournal<JournalRecord>;

const journalOptions = (dir: string): JsonLinesJournalOptions<JournalRecord> => ({
  dir,
  fileName: JOURNAL_FILE_NAME,
  parse: parseRecord,
  recordName: 'an invalidation record',
  corrupt: (message) => new CorruptJournalError(message),
  closed: (message) => new InvalidatorStateError(message),
});

export const InvalidationJournal = {
  /** Opens the journal in `dir` (created if missing) and returns it with the records it held. */
  open(dir: string): Promise<{ journal: InvalidationJournal; records: JournalRecord[] }> {
    return JsonLinesJournal.open(journalOptions(dir));
  },

  /** The records of the journal another process keeps in `dir`, read without opening it for writing. */
  read(dir: string): Promise<JournalRecord[]> {
    return readRecords(join(dir, JOURNAL_FILE_NAME), journalOptions(dir));
  },
};
