// `svc bans [--server <host:port>] [--token <t>] [--output text|json]`: the active bans of a node,
// newest first, as a table for people (age, time left, what each matched, its predicate) or as the
// `GET /v1/bans` body for scripts.
import { defineCommand } from 'citty';
import type { BanListEntry } from '../api/responses.js';
import { adminClientArgs, callApi, clientFromFlags } from './admin-client-args.js';

/** `45s`, `12m`, `3h05m`, `1d02h`: short enough for a table column. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number): string => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor((s % 86400) / 3600))}h`;
}

function predicate(ban: BanListEntry): string {
  return (['host_regex', 'path_regex', 'surrogate_key'] as const)
    .filter((field) => ban[field] !== null)
    .map((field) => `${field}=${ban[field]}`)
    .join(' ');
}

/** Fixed-width columns first, the predicate (any length) last, so long regexes do not stretch the rest. */
const COLUMNS: readonly { title: string; cell: (ban: BanListEntry) => string }[] = [
  { title: 'ID', cell: (ban) => ban.id.slice(0, 8) },
  { title: 'AGE', cell: (ban) => shortDuration(ban.age_s) },
  { title: 'EXPIRES IN', cell: (ban) => shortDuration((Date.parse(ban.expires_at) - Date.parse(ban.created_at)) / 1000 - ban.age_s) },
  { title: 'EVICTED', cell: (ban) => String(ban.evicted) },
  { title: 'HIDDEN', cell: (ban) => String(ban.hidden) },
  { title: 'PREDICATE', cell: predicate },
];

export function bansTable(bans: readonly BanListEntry[]): string {
  const cells = [COLUMNS.map((column) => column.title), ...bans.map((ban) => COLUMNS.map((column) => column.cell(ban)))];
  const width = (column: number): number => Math.max(...cells.map((row) => (row[column] ?? '').length));
  const widths = COLUMNS.map((_, column) => width(column));
  return cells.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ')).join('\n');
}

export const bansCommand = defineCommand({
  meta: { name: 'bans', description: 'list the active bans, newest first, with their age and what they matched' },
  args: { ...adminClientArgs },
  async run({ args }) {
    const client = clientFromFlags(args);
    const body = await callApi('bans', () => client.bans());
    if (args.output === 'json') console.log(JSON.stringify(body));
    else if (body.bans.length === 0) console.log('no active bans');
    else console.log(bansTable(body.bans));
  },
});
