// Rules that relate several keys: unique pool and route names, routes naming an existing pool, and
// `hop_limit` in strong mode. They read the raw input, defensively, so they are reported together
// with the schema's problems rather than after the operator has fixed those.

import type { ConfigIssue } from './config-error.js';
import { formatKeyPath } from './config-error.js';
import { HOP_LIMIT_MAX, HOP_LIMIT_MIN } from './schema.js';

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** The `name` of every element of a list, with its index; elements without a string name are skipped. */
function names(list: unknown): { name: string; index: number }[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((element: unknown, index) => {
    const name = field(element, 'name');
    return typeof name === 'string' ? [{ name, index }] : [];
  });
}

function checkUniqueNames(listKey: 'pools' | 'routes', what: string, input: unknown, issues: ConfigIssue[]): void {
  const firstIndex = new Map<string, number>();
  for (const { name, index } of names(field(input, listKey))) {
    const earlier = firstIndex.get(name);
    if (earlier === undefined) {
      firstIndex.set(name, index);
      continue;
    }
    issues.push({
      path: formatKeyPath([listKey, index, 'name']),
      message: `expected a unique ${what} name, got ${JSON.stringify(name)} (already used by ${listKey}[${earlier}])`,
    });
  }
}

function checkRoutePools(input: unknown, issues: ConfigIssue[]): void {
  const poolNames = new Set(names(field(input, 'pools')).map(({ name }) => name));
  const routes = field(input, 'routes');
  if (!Array.isArray(routes)) return;
  const known = [...poolNames].map((name) => JSON.stringify(name)).join(', ');
  routes.forEach((route: unknown, index) => {
    const pool = field(route, 'pool');
    if (typeof pool !== 'string' || pool === '' || poolNames.has(pool)) return;
    issues.push({
      path: formatKeyPath(['routes', index, 'pool']),
      message: `expected the name of a pool (${known === '' ? 'none is defined' : `one of ${known}`}), got ${JSON.stringify(pool)}`,
    });
  });
}

/** Strong mode fetches from peers, so the hop bound must be chosen explicitly (spec §2.3). */
function checkHopLimit(input: unknown, issues: ConfigIssue[]): void {
  const cluster = field(input, 'cluster');
  if (typeof cluster !== 'object' || cluster === null || Array.isArray(cluster)) return;
  const mode = field(cluster, 'mode') ?? 'strong';
  if (mode !== 'strong' || field(input, 'hop_limit') !== undefined) return;
  issues.push({
    path: 'hop_limit',
    message: `expected an integer from ${HOP_LIMIT_MIN} to ${HOP_LIMIT_MAX} (required when cluster.mode is strong), got nothing`,
  });
}

/** The libp2p transport needs its key directory and allowlist, which only the operator can give. */
function checkLibp2p(input: unknown, issues: ConfigIssue[]): void {
  const cluster = field(input, 'cluster');
  if (typeof cluster !== 'object' || cluster === null || Array.isArray(cluster)) return;
  if (field(cluster, 'transport') !== 'libp2p' || field(cluster, 'libp2p') !== undefined) return;
  issues.push({
    path: 'cluster.libp2p',
    message: 'expected { data_dir, allowed_peer_ids } (required when cluster.transport is libp2p), got nothing',
  });
}

/**
 * Secure by default (issue 16): a clustered node authenticates its cluster traffic, by `cluster.secret`
 * on any transport (or, on UDP, `tls` and `gossip_keys` together), unless `cluster.insecure` says
 * otherwise. A security key the transport cannot honour is refused rather than ignored.
 */
function checkClusterSecurity(input: unknown, issues: ConfigIssue[]): void {
  const cluster = field(input, 'cluster');
  if (typeof cluster !== 'object' || cluster === null || Array.isArray(cluster)) return;
  const transport = field(cluster, 'transport') ?? 'udp';
  const has = (key: string): boolean => field(cluster, key) !== undefined;
  if (transport === 'libp2p') {
    for (const key of ['tls', 'gossip_keys']) {
      if (!has(key)) continue;
      issues.push({
        path: `cluster.${key}`,
        message: `expected nothing with cluster.transport libp2p, which cannot use it (noise encrypts its connections; set cluster.secret to authenticate them), got ${key === 'tls' ? 'an object' : 'a list'}`,
      });
    }
  }
  const insecure = field(cluster, 'insecure') === true;
  if (insecure && has('secret')) {
    issues.push({ path: 'cluster.insecure', message: 'expected false or nothing when cluster.secret is set (the secret authenticates cluster traffic), got true' });
  }
  const udpPair = transport === 'udp' && has('tls') && has('gossip_keys');
  if (!insecure && !has('secret') && !udpPair) {
    issues.push({
      path: 'cluster.secret',
      message:
        'expected a shared secret (base64 of at least 32 bytes, e.g. from `openssl rand -base64 32`) so that cluster traffic is authenticated, or cluster.insecure: true to run the cluster open to anyone who can reach its port, got nothing',
    });
  }
}

export function checkCrossFieldRules(input: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  checkUniqueNames('pools', 'pool', input, issues);
  checkUniqueNames('routes', 'route', input, issues);
  checkRoutePools(input, issues);
  checkHopLimit(input, issues);
  checkLibp2p(input, issues);
  checkClusterSecurity(input, issues);
  return issues;
}
