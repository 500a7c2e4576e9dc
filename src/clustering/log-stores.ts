// Where a node's invalidation log lives: a journal file beside the engine's (`cluster-log.jsonl` in
// the invalidation directory) when the node keeps state on disk, or memory. The memory store is also
// what the simulator hands a node across a simulated restart.
import { CorruptJournalError, InvalidatorStateError } from '../invalidation/errors.js';
import { jsonOfLine, JsonLinesJournal } from '../store/json-lines-journal.js';
import { invalidationFrom } from './invalidation-message.js';
import type { LogRecord, LogStore } from './invalidation-log.js';

export const CLUSTER_LOG_FILE_NAME = 'cluster-log.jsonl';

function parseLogRecord(line: string): LogRecord | undefined {
  const value = jsonOfLine(line);
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (record.type === 'invalidation') {
    const message = invalidationFrom(record.message);
    return message === undefined ? undefined : { type: 'invalidation', message };
  }
  if ((record.type === 'synced' || record.type === 'complete_since') && typeof record.at === 'number' && Number.isFinite(record.at)) {
    return { type: record.type, at: record.at as number };
  }
  return undefined;
}

/** Records kept in memory; `records` is what a new life of the node restores from. */
export class MemoryLogStore implements LogStore {
  records: LogRecord[] = [];

  append(records: readonly LogRecord[]): Promise<void> {
    this.records.push(...records);
    return Promise.resolve();
  }

  rewrite(records: readonly LogRecord[]): Promise<void> {
    this.records = [...records];
    return Promise.resolve();
  }
}

export interface FileLogStore extends LogStore {
  close(): Promise<void>;
}

/** Opens the log journal in `dir`; returns it with the records it held (CorruptJournalError on damage). */
export async function openFileLogStore(dir: string): Promise<{ store: FileLogStore; records: LogRecord[] }> {
  const { journal, records } = await JsonLinesJournal.open({
    dir,
    fileName: CLUSTER_LOG_FILE_NAME,
    parse: parseLogRecord,
    recordName: 'a cluster log record',
    corrupt: (message) => new CorruptJournalError(message),
    closed: (message) => new InvalidatorStateError(message),
  });
  return { store: journal, records };
}
