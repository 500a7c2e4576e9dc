// Issue 30 item 3: the docs tell the truth. Every metric, configuration key, admin endpoint and CLI
// command that README.md and docs/*.md name (test/docs/support/doc-mentions.ts says how a name is
// recognised) exists: metrics in what a real node with every part switched on (warm tier, cluster,
// CDN, background refresh, tracing, reload from a file, profiling) prints at /metrics, with their label
// names from its registry; keys in the configuration schema; endpoints among the admin router's routes
// or the channels its cluster transport serves under /v1/peer/; commands, subcommands and flags in the
// CLI's command tree.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mainCommand } from '../../src/cli/cli.js';
import { allCommands, describeCommandTree, type CommandInfo } from '../../src/cli/command-tree.js';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';
import { fetchRaw } from '../support/http.js';
import { freePort } from '../../bench/support/free-port.js';
import { CLUSTER_SECRET } from '../support/svc-cluster.js';
import { parseExposition } from '../support/svc-metrics.js';
import { readDocMentions, type DocMentions, type Mention } from './support/doc-mentions.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Names the docs use on purpose that are not svc's metrics, keys, endpoints or commands. Each says
 * why; nothing else may be missing.
 */
const NOT_SVC_NAMES: Readonly<Record<string, string>> = {
  // The dashboard's session cookie (docs/dashboard.md), named like a metric but not one.
  svc_session: 'the dashboard session cookie',
  // An OpenTelemetry collector's OTLP/HTTP path, which svc posts spans to (docs/configuration.md).
  '/v1/traces': "the OTLP collector's path",
  // A log line quoted in prose, not a command.
  'svc is serving': 'the startup log line',
  // docs/admin-api.md's example of an unknown flag, which the CLI refuses.
  'svc ban surrogate_key=x --dry-run': 'an example of a refused flag',
  // docs/decisions.md says the CLI has no such command (a plain GET of /drain drains).
  'svc drain': 'named as absent',
  // docs/decisions.md says there is no such command (a signal upgrades svc serve).
  'svc upgrade': 'named as absent',
  // docs/performance.md's benchmark tables label their rows by the `workers` setting.
  'svc workers': 'a benchmark row label',
};

function isExempt(mention: Mention, name: string): boolean {
  return NOT_SVC_NAMES[name] !== undefined || NOT_SVC_NAMES[mention.text] !== undefined;
}

/** `where: text (why)` for each mention `problem` finds fault with. */
function faults<T extends Mention>(mentions: readonly T[], problem: (mention: T) => string | undefined): string[] {
  return mentions.flatMap((mention) => {
    const why = problem(mention);
    return why === undefined ? [] : [`${mention.where}: ${mention.text} (${why})`];
  });
}

// ---- the configuration schema ----

type JsonSchema = { properties?: Record<string, JsonSchema>; items?: JsonSchema; additionalProperties?: boolean | JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[] };

/** The schema and its alternatives (anyOf, oneOf, allOf), flattened. */
function alternatives(schema: JsonSchema): JsonSchema[] {
  return [schema, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap(alternatives)];
}

/** Whether `routes[].cache.ttl_override`-style path names a key of the schema. */
function schemaHasKey(root: JsonSchema, path: string): boolean {
  const segments = path.split(/\.|(?=\[)/).map((segment) => (segment.startsWith('[') ? '[]' : segment));
  let nodes = [root];
  for (const segment of segments) {
    nodes = nodes.flatMap(alternatives).flatMap((node): JsonSchema[] => {
      if (segment === '[]') return node.items ? [node.items] : [];
      const property = node.properties?.[segment] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      // `routes.name` for `routes[].name`: the docs may leave the brackets out.
      const inItems = node.items?.properties?.[segment];
      return [property, inItems].filter((found): found is JsonSchema => found !== undefined);
    });
    if (nodes.length === 0) return false;
  }
  return true;
}

// ---- the metrics ----

interface Exposed {
  /** Every name a sample may have (histograms' `_bucket`, `_sum` and `_count` included) → its family. */
  names: Map<string, string>;
  /** Label names seen on each family's samples (`le` aside); a family without samples has none. */
  labels: Map<string, Set<string>>;
}

/** What a Prometheus text exposition names. */
function exposed(text: string): Exposed {
  const families = parseExposition(text);
  const names = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  for (const [family, { type, samples }] of families) {
    names.set(family, family);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.set(`${family}${suffix}`, family);
    for (const sample of samples) names.set(sample.name, family);
    labels.set(family, new Set(samples.flatMap((sample) => Object.keys(sample.labels)).filter((label) => label !== 'le')));
  }
  return { names, labels };
}

describe('names in README.md and docs/*.md exist', () => {
  const schema = configJsonSchema() as JsonSchema;
  const mentions: DocMentions = readDocMentions(REPO, new Set(Object.keys(schema.properties ?? {})));
  let origin: TestOrigin;
  let svc: SvcUnderTest;
  let dir: string;
  let clusterAddress: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-docs-'));
    origin = await startTestOrigin(() => ({ headers: { 'cache-control': 'max-age=60' }, body: 'x' }));
    clusterAddress = `127.0.0.1:${await freePort()}`;
    // Every part that registers metrics or mounts routes of its own is switched on; the CDN and the
    // trace collector are closed ports on loopback, which nothing here makes svc call.
    svc = await startSvc([origin.url], {
      dir,
      reloadable: true,
      config: {
        workers: 1,
        hop_limit: 2,
        admin: { listen: '127.0.0.1:0', token: 'test-admin-token-0123456789', pprof_enabled: true },
        warm: { path: join(dir, 'warm'), max_bytes: 10_000_000 },
        routes: [{ name: 'main', match: { path_prefix: '/' }, pool: 'origin', refresh_before_expiry: true }],
        cluster: { mode: 'strong', node_name: 'docs', secret: CLUSTER_SECRET, bind: clusterAddress },
        cdn: { zone_id: '023e105f4ecef8ad9ca31a8372d0c353', api_base_url: 'http://127.0.0.1:9/client/v4', api_token: 'cdn-token-for-the-docs-test' },
        tracing: { endpoint: '127.0.0.1:9' },
      },
    });
  });
  after(async () => {
    await svc?.stop();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the docs name some of each kind (the recognisers still find them)', () => {
    assert.ok(mentions.metrics.length > 100, `metrics: ${mentions.metrics.length}`);
    assert.ok(mentions.configKeys.length > 100, `config keys: ${mentions.configKeys.length}`);
    assert.ok(mentions.endpoints.length > 50, `endpoints: ${mentions.endpoints.length}`);
    assert.ok(mentions.commands.length > 30, `commands: ${mentions.commands.length}`);
  });

  test('every metric is printed at /metrics, with the label names the docs give it', async () => {
    // One miss and one hit, so that the traffic metrics have samples whose labels can be read.
    for (let i = 0; i < 2; i++) assert.equal((await fetchRaw(`${svc.dataUrl}/docs-test`)).status, 200);
    const answer = await fetchRaw(`${svc.adminUrl}/metrics`);
    assert.equal(answer.status, 200);
    const { names, labels } = exposed(answer.body);
    const problems = faults(mentions.metrics, (mention) => {
      if (isExempt(mention, mention.name)) return undefined;
      if (mention.prefix) return [...names.keys()].some((name) => name.startsWith(mention.name)) ? undefined : 'no metric begins so';
      const family = names.get(mention.name);
      if (family === undefined) return 'no such metric';
      // A labelled metric nothing has moved yet prints no sample, so its label names cannot be read.
      const known = labels.get(family)!;
      if (known.size === 0 && mention.labels.some((label) => label !== 'le')) return answer.body.includes(`\n${family}`) ? 'it has no labels' : undefined;
      const allowed = new Set([...known, ...(mention.name.endsWith('_bucket') ? ['le'] : [])]);
      const unknown = mention.labels.filter((label) => !allowed.has(label));
      return unknown.length === 0 ? undefined : `no label ${unknown.join(', ')}; it has ${[...allowed].join(', ') || 'none'}`;
    });
    assert.deepEqual(problems, []);
  });

  test('every configuration key is in the schema', () => {
    const problems = faults(mentions.configKeys, (mention) => (isExempt(mention, mention.text) || schemaHasKey(schema, mention.text) ? undefined : 'not a configuration key'));
    assert.deepEqual(problems, []);
  });

  test('every endpoint is a route of the admin listener, or a channel the cluster transport serves', async () => {
    const routes = svc.node.adminRoutes().map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return { method, path };
    });
    const served = (method: string | undefined, path: string, prefix: boolean): boolean =>
      routes.some(
        (route) =>
          (method === undefined || route.method === method || (method === 'HEAD' && route.method === 'GET')) &&
          (prefix ? route.path.startsWith(path) : route.path.endsWith('*') ? path.startsWith(route.path.slice(0, -1)) : route.path === path),
      );
    // The transport answers 404 for a channel it has no handler for, and refuses the rest unsealed.
    const peerChannels = new Map<string, boolean>();
    for (const mention of mentions.endpoints) {
      if (!mention.path.startsWith('/v1/peer/') || mention.prefix || peerChannels.has(mention.path)) continue;
      const answer = await fetchRaw(`http://${clusterAddress}${mention.path}`, { method: 'POST', body: '' });
      peerChannels.set(mention.path, answer.status !== 404);
    }
    const adminPath = (path: string): boolean => /^\/(v1|dashboard|debug)\b/.test(path) || ['/healthz', '/readyz', '/drain', '/version', '/metrics'].includes(path);
    const problems = faults(mentions.endpoints, (mention) => {
      if (isExempt(mention, mention.path) || !adminPath(mention.path)) return undefined;
      if (mention.path.startsWith('/v1/peer/')) {
        if (mention.method !== undefined && mention.method !== 'POST') return 'peer requests are POST';
        if (mention.prefix) return undefined;
        return peerChannels.get(mention.path) ? undefined : 'the cluster transport serves no such channel';
      }
      return served(mention.method, mention.path, mention.prefix) ? undefined : 'no such admin route';
    });
    assert.deepEqual(problems, []);
  });

  test('every command, subcommand and flag is in the CLI', async () => {
    const root = await describeCommandTree(mainCommand);
    const problems = faults(mentions.commands, (mention) => {
      if (isExempt(mention, mention.text) || isExempt(mention, `svc ${mention.words[0]}`) || mention.words[0] === '…') return undefined;
      let command: CommandInfo = root;
      for (const word of mention.words) {
        if (word.startsWith('-') || command.subcommands.length === 0) break;
        if (!/^[a-z][a-z0-9-]*$/.test(word)) break;
        const next = command.subcommands.find((sub) => sub.name === word);
        if (next === undefined) return `svc ${command.path.join(' ')}${command.path.length > 0 ? ' ' : ''}has no command ${word}`;
        command = next;
      }
      const flags = new Set(command.flags.flatMap((flag) => flag.names));
      const unknown = mention.words
        .map((word) => /^\[?--([a-z][a-z0-9-]*)/.exec(word)?.[1])
        .filter((flag): flag is string => flag !== undefined && !flags.has(flag));
      return unknown.length === 0 ? undefined : `svc ${command.path.join(' ')} has no flag ${unknown.map((flag) => `--${flag}`).join(', ')}`;
    });
    assert.ok(allCommands(root).length > 10, 'the command tree was read');
    assert.deepEqual(problems, []);
  });
});
