// The running build's identity, as spec §9 `GET /version` reports it: `version` from package.json,
// `commit` and `date` stamped at build time by stamp-build-info.ts.
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  version: string;
  commit: string;
  date: string;
}

function readJson(relative: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  // Compiled to dist/src/version/, so the package root is three levels up and dist/ two.
  const pkg = readJson('../../../package.json');
  const stamp = readJson('../../build-info.json');
  cached = {
    version: typeof pkg.version === 'string' ? pkg.version : '0.0.0',
    commit: typeof stamp.commit === 'string' ? stamp.commit : 'unknown',
    date: typeof stamp.date === 'string' ? stamp.date : new Date(0).toISOString(),
  };
  return cached;
}
