// `svc top`: a live view of a node in the terminal (varnishstat's place): request rates by cache
// result and by source, hit ratio, latency quantiles, tier sizes, evictions, active bans and the
// cluster's members; with `--cluster`, one block per alive member, each read from its own admin
// address. Rates are taken from two readings of `/metrics` an interval apart; `--once` prints one
// frame and exits (for scripts), `--output json` prints the computed view.
import { setTimeout as sleep } from 'node:timers/promises';
import { defineCommand } from 'citty';
import { request } from 'undici';
import type { AdminClient } from '../client/admin-client.js';
import { parseDurationMs } from '../config/index.js';
import { adminClientArgs, callApi, clientFromFlags } from './admin-client-args.js';
import { CliError } from './cli-error.js';
import { parseMetricsText } from './top/metrics-text.js';
import { nodeView, renderTop, type NodeReading, type TopView } from './top/top-view.js';

/** Shortest refresh: a scrape costs the node some work, and faster is not readable anyway. */
const MIN_INTERVAL_MS = 200;

interface Target {
  name: string;
  client: AdminClient;
}

async function read(target: Target, withStats: boolean): Promise<NodeReading> {
  const url = `${target.client.baseUrl}/metrics`;
  let text: string;
  try {
    const answer = await request(url, { signal: AbortSignal.timeout(10_000) });
    text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`);
  } catch (error) {
    throw new CliError(`top failed: cannot read ${url}: ${(error as Error).message}`, 1);
  }
  const stats = withStats ? await callApi('top', () => target.client.stats()) : null;
  return { name: target.name, atMs: Date.now(), samples: parseMetricsText(text), stats };
}

export const topCommand = defineCommand({
  meta: { name: 'top', description: 'live view of a node (or, with --cluster, of every member): rates, hit ratio, latency, tiers, bans, peers' },
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
    let { nodes, peers } = await targets();
    let before = await Promise.all(nodes.map((node) => read(node, withStats)));
    for (;;) {
      await sleep(intervalMs);
      const after = await Promise.all(nodes.map((node) => read(node, withStats)));
      const view: TopView = {
        at: new Date().toISOString(),
        intervalMs,
        nodes: after.map((reading) => nodeView(before.find((earlier) => earlier.name === reading.name) ?? reading, reading)),
        peers,
      };
      if (args.output === 'json') process.stdout.write(`${JSON.stringify(view)}\n`);
      // On a terminal each frame replaces the last; elsewhere frames follow each other.
      else process.stdout.write(live && process.stdout.isTTY ? `\x1b[H\x1b[2J${renderTop(view)}` : `${renderTop(view)}${live ? '\n' : ''}`);
      if (!live) return;
      if (args.cluster) {
        // Members come and go: the list is read again each round, and new members start from this reading.
        ({ nodes, peers } = await targets());
        before = await Promise.all(nodes.map((node) => after.find((reading) => reading.name === node.name) ?? read(node, withStats)));
      } else {
        before = after;
      }
    }
  },
});

/** The asked node's own name in its peer list (the member whose admin address it is), else its address. */
function peersSelf(peers: TopView['peers'], baseUrl: string): string {
  const host = new URL(baseUrl).host;
  return peers.find((peer) => peer.admin_address === host)?.name ?? host;
}
