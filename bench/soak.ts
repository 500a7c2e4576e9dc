// Issue 29 item 3: the soak. `svc serve` on the defaults (one data-plane thread per core; a warm tier
// of 64 MiB, small so that it is at its bound and evicting all along) under 30 minutes of mixed load:
// HITs on a Zipf catalogue, misses on new paths, Vary variants, objects that keep going stale; a purge,
// ban, batch purge or refresh every 2 s, a reload every minute (SIGHUP and POST /v1/reload in turn),
// a data-plane thread killed every 5 minutes (bench/support/soak-thread-kill.ts says how).
//
//   npm run build && node dist/bench/soak.js [--minutes 30] [--rate 1000] [--connections 16]
//     [--warm-max-bytes 67108864] [--hot-max-bytes N] [--kill-every-s 300] [--reload-every-s 60]
//     [--node-flags=--max-semi-space-size=16] [--seed 1] [--json soak.json]
//
// Shorter runs scale the kills (every half of the run at most) and reloads, and give the figures
// per sixth of the run instead of per 5 minutes. It prints the failed requests (split into those on a
// killed thread's connections and the others), the node's memory at the end of warm-up (the first
// window) and at the end, and the HIT latency per window; it asserts nothing. It exits non-zero only
// when the soak itself could not run its course (a step of it broke, or the node exited on its own).
import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { formatSoakFigures, soakFigures } from './support/soak-report.js';
import { runSoak, soakDefaults } from './support/soak-run.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '30' },
    rate: { type: 'string' },
    connections: { type: 'string' },
    'warm-max-bytes': { type: 'string' },
    'hot-max-bytes': { type: 'string' },
    'kill-every-s': { type: 'string' },
    'reload-every-s': { type: 'string' },
    'node-flags': { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'string' },
  },
});

const defaults = soakDefaults(Number(values.minutes) * 60_000);
const options = {
  ...defaults,
  requestsPerSecond: Number(values.rate ?? defaults.requestsPerSecond),
  connections: Number(values.connections ?? defaults.connections),
  warmMaxBytes: Number(values['warm-max-bytes'] ?? defaults.warmMaxBytes),
  hotMaxBytes: values['hot-max-bytes'] === undefined ? undefined : Number(values['hot-max-bytes']),
  killEveryMs: values['kill-every-s'] === undefined ? defaults.killEveryMs : Number(values['kill-every-s']) * 1000,
  reloadEveryMs: values['reload-every-s'] === undefined ? defaults.reloadEveryMs : Number(values['reload-every-s']) * 1000,
  nodeFlags: values['node-flags']?.split(' ').filter((flag) => flag !== ''),
  seed: Number(values.seed ?? defaults.seed),
  progress: (line: string) => console.log(`[soak] ${line}`),
};
console.log(
  `soak: ${values.minutes} min, ${options.requestsPerSecond} requests/s over ${options.connections} connections, warm.max_bytes ${options.warmMaxBytes}, ` +
    `hot_max_bytes ${options.hotMaxBytes ?? 'default'}, node flags ${options.nodeFlags?.join(' ') || 'none'}, a thread killed every ${options.killEveryMs / 1000} s, a reload every ${options.reloadEveryMs / 1000} s, ` +
    `an invalidation every ${options.invalidateEveryMs / 1000} s; Node ${process.version}, ${availableParallelism()} cores`,
);
const record = await runSoak(options);
const figures = soakFigures(record);
console.log(formatSoakFigures(figures));
if (values.json !== undefined) await writeFile(values.json, `${JSON.stringify(figures, null, 2)}\n`);
if (record.nodeExit.during) {
  console.error(`the node exited during the soak; its last lines of standard error:\n${record.stderrTail.join('\n')}`);
  process.exitCode = 1;
}
