// The refresh registry on disk, so what is popular survives a restart: one JSON file in a directory
// beside the warm tier's records, replaced whole by a write to a temporary file and a rename (a crash leaves the
// old file or the new one, never half of one). The file holds no response data, only what a refetch
// needs; a file that does not parse is ignored, since popularity is relearnt within one lifetime.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';

export const REGISTRY_FILE_NAME = 'refresh-registry.json';
/** Bumped when the record shape changes; a file of another version is ignored. */
const REGISTRY_FILE_VERSION = 1;

const persistedRecordSchema = v.object({
  key: v.string(),
  variantKey: v.string(),
  route: v.string(),
  path: v.string(),
  host: v.string(),
  varyFields: v.array(v.string()),
  hits: v.pipe(v.number(), v.integer(), v.minValue(0)),
  entryStampMs: v.number(),
});

const registryFileSchema = v.object({
  version: v.literal(REGISTRY_FILE_VERSION),
  records: v.array(persistedRecordSchema),
});

export type PersistedRecord = v.InferOutput<typeof persistedRecordSchema>;

export function registryFilePath(directory: string): string {
  return join(directory, REGISTRY_FILE_NAME);
}

export async function writeRegistryFile(directory: string, records: readonly PersistedRecord[]): Promise<void> {
  await mkdir(directory, { recursive: true });
  const path = registryFilePath(directory);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ version: REGISTRY_FILE_VERSION, records }));
  await rename(temporary, path);
}

export type RegistryFileRead =
  | { status: 'read'; records: PersistedRecord[] }
  | { status: 'absent' }
  | { status: 'unreadable'; reason: string };

export async function readRegistryFile(directory: string): Promise<RegistryFileRead> {
  let text: string;
  try {
    text = await readFile(registryFilePath(directory), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'absent' };
    return { status: 'unreadable', reason: (error as Error).message };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { status: 'unreadable', reason: (error as Error).message };
  }
  const parsed = v.safeParse(registryFileSchema, json);
  if (!parsed.success) return { status: 'unreadable', reason: parsed.issues[0].message };
  return { status: 'read', records: parsed.output.records };
}
