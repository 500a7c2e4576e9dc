// The configuration file of a single svc node a benchmark starts: one route sending everything to
// one origin, an admin listener with a fixed token, and whatever else the benchmark adds.
import { writeFile } from 'node:fs/promises';

export interface BenchSvcConfig {
  port: number;
  adminPort: number;
  originPort: number;
  /** Further top-level YAML lines (hot_max_bytes, warm…). */
  extra?: string[];
  /**
   * The configuration's `workers`; 1 unless a benchmark is about workers, so that the hit-path
   * figures compare one svc process with one bare Node process, as they always have.
   */
  workers?: number;
}

export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

export async function writeBenchSvcConfig(path: string, config: BenchSvcConfig): Promise<string> {
  await writeFile(
    path,
    [
      `listen: 127.0.0.1:${config.port}`,
      `admin: { listen: "127.0.0.1:${config.adminPort}", token: ${BENCH_ADMIN_TOKEN} }`,
      `workers: ${config.workers ?? 1}`,
      ...(config.extra ?? []),
      `pools: [{ name: origin, upstreams: ["http://127.0.0.1:${config.originPort}"] }]`,
      'routes: [{ name: bench, match: { path_prefix: / }, pool: origin }]',
    ].join('\n'),
  );
  return path;
}
