// Fixture files stay in the source tree (tsc copies only .ts); compiled tests find them from the
// repository root, three levels above dist/test/config/.
import { fileURLToPath } from 'node:url';

export function repoPath(relativePath: string): string {
  return fileURLToPath(new URL(`../../../${relativePath}`, import.meta.url));
}

export function fixturePath(name: string): string {
  return repoPath(`test/config/fixtures/${name}`);
}
