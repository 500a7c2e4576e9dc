// `svc top`: a live view of a node in the terminal (varnishstat's place): request rates by cache
// result and by source, hit ratio, latency quantiles, tier sizes, evictions, active bans and the
// cluster's members; with `--cluster`, one block per alive member, each read from its own admin
// address. Rates are taken from two readings of `/metrics` an interval apart; `--once` prints one
// frame and exits (for scripts), `--output json` prints the computed view. On a terminal `q` or
// Ctrl-C ends the live view at once (top/quit-keys.ts); elsewhere Ctrl-C (SIGINT) ends it.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineCommand } from 'citty';
import { request } from 'undici';
import type { AdminClient } from '../client/admin-client.js';
import { parseDurationMs } from '../config/index.js';
import { adminClientArgs, callApi, clientFromFlags } from './admin-client-args.js';
import { CliError } from './cli-error.js';
import { parseMetricsText } from './top/metrics-text.js';
import { watchQuitKeys } from './top/quit-keys.js';
import { nodeView, renderTop, type NodeReading, type TopView } from './top/top-view.js';

/** Shortest refresh: a scrape costs the node some work, and faster is not readable anyway. */
const MIN_INTERVAL_MS = 200;

interface Target {
  name: string;
  client: AdminClient;
}

async function read(target: Target, withStats: boolean, quit: AbortSignal | undefined): Promise<NodeReading> {
  const url = `${target.client.baseUrl}/metrics`;
  let text: string;
  try {
    const timeout = AbortSignal.timeout(10_000);
    const answer = await request(url, { signal: quit ? AbortSignal.any([quit, timeout]) : timeout });
    text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`);
  } catch (error) {
    throw new CliError(`top failed: cannot read ${url}: ${(error as Error).message}`, 1);
  }
  const stats = withStats ? await callApi('top', () => target.client.stats()) : null;
  return { name: target.name, atMs: Date.now(), samples: parseMetricsText(text), stats };
}

export const topCommand = defineCommand({
  meta: { name: 'top', description: 'live view of a node (or, with --cluster, of every member): rates, hit ratio, latency, tiers, bans, peers; q or Ctrl-C quits' },
  args: {
    ...adminClientArgs,
    interval: { type: 'string', description: 'time between refreshes, a duration like 2s or 500ms', default: '2s', valueHint: 'duration' },
    once: { type: 'boolean', description: 'print one frame (two readings an interval apart) and exit' },
    cluster: { type: 'boolean', description: 'one block per alive member, read from its admin address' },
  },
  async run({ args }) {
    const intervalMs = parseDurationMs(args.interval);
    if (intervalMs === undefined || intervalMs < MIN_INTERVAL_MS) {
      throw new CliError(`--interval must be a duration of at least ${MIN_INTERVAL_MS}ms, like 2s, got ${JSON.stringify(args.interval)}`, 2);
    }
    const env = process.env;
    const withStats = (args.token ?? env.SVC_ADMIN_TOKEN ?? '') !== '';
    const asked = clientFromFlags(args, env, false);
    const targets = async (): Promise<{ nodes: Target[]; peers: TopView['peers'] }> => {
      const peers = await callApi('top', () => asked.peers());
      if (!args.cluster || peers.length === 0) return { nodes: [{ name: peers[0] ? peersSelf(peers, asked.baseUrl) : new URL(asked.baseUrl).host, client: asked }], peers };
      const alive = peers.filter((peer) => peer.state === 'alive');
      return { nodes: alive.map((peer) => ({ name: peer.name, client: clientFromFlags({ ...args, server: peer.admin_address }, env, false) })), peers };
    };
    const live = !args.once;
    const frames = async (quit: AbortSignal | undefined): Promise<void> => {
      let { nodes, peers } = await targets();
      let before = await Promise.all(nodes.map((node) => read(node, withStats, quit)));
      for (;;) {
        await sleep(intervalMs, undefined, { signal: quit });
        const after = await Promise.all(nodes.map((node) => read(node, withStats, quit)));
        const view: TopView = {
          at: new Date().toISOString(),
          intervalMs,
          nodes: after.map((reading) => nodeView(before.find((earlier) => earlier.name === reading.name) ?? reading, reading)),
          peers,
        };
        if (args.output === 'json') process.stdout.write(`${JSON.stringify(view)}\n`);
        // On a terminal each frame replaces the last; elsewhere frames follow each other.
        else if (live && process.stdout.isTTY) process.stdout.write(`\x1b[H\x1b[2J${renderTop(view)}${quit ? 'q or Ctrl-C quits\n' : ''}`);
        else process.stdout.write(`${renderTop(view)}${live ? '\n' : ''}`);
        if (!live) return;
        if (args.cluster) {
          // Members come and go: the list is read again each round, and new members start from this reading.
          ({ nodes, peers } = await targets());
          before = await Promise.all(nodes.map((node) => after.find((reading) => reading.name === node.name) ?? read(node, withStats, quit)));
        } else {
          before = after;
        }
      }
    };
    if (!live || !process.stdin.isTTY) return frames(undefined);
    const keys = watchQuitKeys(process.stdin);
    // The first frame needs two readings an interval apart; till then the terminal says what comes.
    process.stderr.write(`svc top: reading ${asked.baseUrl} every ${args.interval}; q or Ctrl-C quits\n`);
    try {
      const running = frames(keys.signal);
      // A quit key ends top now: the frames stop at their next wait, which the signal cuts short.
      running.catch(() => undefined);
      await Promise.race([running, once(keys.signal, 'abort')]);
    } finally {
      keys.restore();
    }
  },
});

/** The asked node's own name in its peer list (the member whose admin address it is), else its address. */
function peersSelf(peers: TopView['peers'], baseUrl: string): string {
  const host = new URL(baseUrl).host;
  return peers.find((peer) => peer.admin_address === host)?.name ?? host;
}
