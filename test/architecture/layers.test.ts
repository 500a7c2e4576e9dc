// The layers of src/ point one way (docs/architecture.md): every import of every file, type-only ones
// included, goes to its own folder or to a folder lower in the table; no file circle; bench/ never
// imports test/. The table is read from the document, so the document and the code cannot drift apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** `from '…'`, `import '…'` and `import('…')` with a relative specifier. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { recursive: true });
  return entries.filter((entry) => entry.endsWith('.ts') && !entry.endsWith('.d.ts')).map((entry) => join(dir, entry));
}

/** Each file's relative imports, as paths from the project root with a .ts ending. */
async function importsOf(files: readonly string[]): Promise<Map<string, string[]>> {
  const imports = new Map<string, string[]>();
  for (const file of files) {
    const text = await readFile(join(root, file), 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].map((match) => relative(root, resolve(root, dirname(file), match[1]!)).replace(/\.js$/, '.ts'));
    imports.set(file, targets);
  }
  return imports;
}

/** The layer table: folder → rank, read from the rows `| rank | \`folder\` | … |`. */
async function layerTable(): Promise<Map<string, number>> {
  const text = await readFile(join(root, 'docs', 'architecture.md'), 'utf8');
  const ranks = new Map<string, number>();
  for (const match of text.matchAll(/^\| (\d+) \| `([a-z-]+)` \|/gm)) ranks.set(match[2]!, Number(match[1]));
  return ranks;
}

/** The folder under src/ a file belongs to; undefined for src/index.ts and files outside src/. */
function folderOf(file: string): string | undefined {
  const parts = file.split(sep);
  return parts[0] === 'src' && parts.length > 2 ? parts[1] : undefined;
}

test('the layer table names every folder of src/ once, with distinct ranks', async () => {
  const ranks = await layerTable();
  const folders = (await readdir(join(root, 'src'), { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  assert.deepEqual([...ranks.keys()].sort(), folders.sort());
  assert.equal(new Set(ranks.values()).size, ranks.size, 'two folders share a rank');
});

test('every import in src/ goes to its own folder or a lower layer', async () => {
  const ranks = await layerTable();
  const imports = await importsOf(await sourceFiles('src'));
  const climbing: string[] = [];
  for (const [file, targets] of imports) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      if (!(ranks.get(to)! < ranks.get(from)!)) climbing.push(`${file} → ${target} (${from} ${ranks.get(from)} → ${to} ${ranks.get(to)})`);
    }
  }
  assert.deepEqual(climbing, []);
});

test('no file in src/ reaches itself through its imports', async () => {
  const imports = await importsOf(await sourceFiles('src'));
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const target of imports.get(file) ?? []) if (imports.has(target)) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of imports.keys()) visit(file, []);
  assert.deepEqual(circles, []);
});

test('bench/ imports nothing from test/', async () => {
  const imports = await importsOf(await sourceFiles('bench'));
  const intoTests = [...imports].flatMap(([file, targets]) => targets.filter((target) => target.startsWith(`test${sep}`)).map((target) => `${file} → ${target}`));
  assert.deepEqual(intoTests, []);
});
