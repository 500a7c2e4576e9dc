// `svc cluster peers [--server <host:port>] [--token <t>] [--output text|json]` (spec §4.2): the
// members a node knows of, as a table for people or JSON for scripts.
import { defineCommand } from 'citty';
import type { Peer } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags } from './admin-client-args.js';

const COLUMNS: readonly { title: string; cell: (peer: Peer) => string }[] = [
  { title: 'NAME', cell: (p) => p.name },
  { title: 'STATE', cell: (p) => p.state },
  { title: 'CLUSTER ADDRESS', cell: (p) => p.cluster_address },
  { title: 'ADMIN ADDRESS', cell: (p) => p.admin_address },
  { title: 'INC', cell: (p) => String(p.incarnation) },
  { title: 'MODE', cell: (p) => (p.mode_drift ? `${p.mode} (drift)` : p.mode) },
  { title: 'VERSION', cell: (p) => p.version },
  { title: 'RING SHARE', cell: (p) => (p.ring_share === null ? '-' : `${(p.ring_share * 100).toFixed(1)}%`) },
];

/** Columns padded to their widest cell, two spaces apart. */
export function peersTable(peers: readonly Peer[]): string {
  const rows = [COLUMNS.map((c) => c.title), ...peers.map((peer) => COLUMNS.map((c) => c.cell(peer)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

const peersCommand = defineCommand({
  meta: { name: 'peers', description: 'list the cluster members a node knows of' },
  args: { ...adminClientArgs },
  async run({ args }) {
    const client = clientFromFlags(args, process.env, false);
    const peers = await callApi('cluster peers', () => client.peers());
    if (args.output === 'json') console.log(JSON.stringify(peers));
    else console.log(peers.length === 0 ? 'this node runs alone (no cluster configured)' : peersTable(peers));
  },
});

export const clusterCommand = defineCommand({
  meta: { name: 'cluster', description: 'inspect the cluster' },
  subCommands: { peers: peersCommand },
});
