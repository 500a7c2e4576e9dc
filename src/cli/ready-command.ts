// `svc ready [--wait <duration>]`: exits 0 when the node's /readyz says ready, 1 otherwise; with
// --wait it polls until the node is ready or the time is up. For readiness gates that have no HTTP
// client at hand: systemd's ExecStartPost (examples/systemd/svc.service), a container HEALTHCHECK.
import { setTimeout as sleep } from 'node:timers/promises';
import { defineCommand } from 'citty';
import { AdminApiError } from '../client/admin-api-error.js';
import { parseDurationMs } from '../config/index.js';
import { adminClientArgs, clientFromFlags, printAnswer } from './admin-client-args.js';
import { CliError } from './cli-error.js';

/** Between two looks while waiting: startup phases take hundreds of milliseconds at least. */
const POLL_MS = 250;

export const readyCommand = defineCommand({
  meta: { name: 'ready', description: 'exit 0 when the node is ready (GET /readyz), 1 when not; --wait polls until it is' },
  args: {
    ...adminClientArgs,
    wait: { type: 'string', description: 'keep asking for up to this long, a duration like 60s', valueHint: 'duration' },
  },
  async run({ args }) {
    const waitMs = args.wait === undefined ? 0 : parseDurationMs(args.wait);
    if (waitMs === undefined) throw new CliError(`--wait must be a duration like 60s, got ${JSON.stringify(args.wait)}`, 2);
    const client = clientFromFlags(args, process.env, false);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const last = await client.ready(true).catch((error: unknown) => {
        if (error instanceof AdminApiError) return { status: error.message, conditions: [] };
        throw error;
      });
      if (last.status === 'ready') {
        printAnswer(args.output, last, 'ready');
        return;
      }
      if (Date.now() + POLL_MS > deadline) {
        const waiting = (last.conditions ?? []).filter((condition) => !condition.ready).map((condition) => `${condition.name}: ${condition.reason}`);
        throw new CliError(`not ready: ${last.status}${waiting.length > 0 ? ` (${waiting.join('; ')})` : ''}`, 1);
      }
      await sleep(POLL_MS);
    }
  },
});
