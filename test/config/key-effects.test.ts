// Issue 19 item 5: no configuration key is accepted that does nothing. Every key path of the
// configuration schema (what `svc config schema` prints) has a row below naming the one test that
// proves the key's effect: a test where the key's value changes what svc does, not only that the key
// validates. A key added to the schema without a row fails this file, and so does a row whose key
// left the schema or whose test was renamed or removed. A block's own row (`warm`, `cluster`…) names a
// test of what the block's presence turns on.
//
// Rows point at the test sources (test/…/*.test.ts), read from the repository next to dist/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from '../../src/config/json-schema.js';

interface Proof {
  /** Path of the test source, from the repository root. */
  file: string;
  /** The test's title, exactly as the first argument of its test() call. */
  title: string;
}

const EFFECTS: Record<string, Proof> = {
  listen: { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  hot_max_bytes: { file: 'test/proxy/single-node-caching.test.ts', title: 'a tiny hot_max_bytes evicts the least recently used entry' },
  workers: { file: 'test/node/workers/one-cache.test.ts', title: 'the node runs the threads it is configured with, and says so' },
  max_object_bytes: { file: 'test/http-caching/cache-results.test.ts', title: 'a Content-Length over max_object_bytes: BYPASS' },
  stale_if_unreachable: { file: 'test/http-caching/rfc9111-4.2-freshness.test.ts', title: 'svc: stale_if_unreachable: 0 turns the default off' },
  client_write_idle_timeout: {
    file: 'test/fill/slow-clients.test.ts',
    title: 'a client that stops reading is cut off by the write-idle timeout; the fill completes and is stored',
  },
  hop_limit: { file: 'test/clustering/peer-fetch.test.ts', title: 'a peer fetch that reached hop_limit at a node not owning its key is answered from the origin there, and counted' },
  max_active_bans: { file: 'test/node/reload.test.ts', title: 'max_active_bans applies to the next ban; a lower bound removes none of the bans in force' },

  admin: { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'admin.listen': { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'admin.token': {
    file: 'test/node/serve-process.test.ts',
    title: 'SIGHUP and svc reload apply a new configuration in the running process; a refused one leaves it as it was',
  },
  'admin.pprof_enabled': { file: 'test/api/admin-api.test.ts', title: '/debug/pprof/* is not mounted when admin.pprof_enabled is false' },
  'admin.auth_failure_limit': {
    file: 'test/admin/auth-rate-limit.test.ts',
    title: 'past the limit an address gets 429 with Retry-After, even with the right token, until its window ends',
  },
  'admin.auth_failure_window': {
    file: 'test/admin/auth-rate-limit.test.ts',
    title: 'past the limit an address gets 429 with Retry-After, even with the right token, until its window ends',
  },

  warm: { file: 'test/warm/warm-tier.test.ts', title: 'an entry evicted from a tiny hot tier is served from warm (HIT, source="warm") and promoted' },
  'warm.path': { file: 'test/warm/warm-tier.test.ts', title: 'after a restart, entries are served from warm at once, without origin traffic' },
  'warm.max_bytes': { file: 'test/store/warm-store.test.ts', title: 'recency persists coarsely, so eviction after a restart spares what was read' },
  'warm.write_queue_length': { file: 'test/store/warm-store.test.ts', title: 'puts beyond the write queue are dropped and counted; the queue frees once written' },

  pools: { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'pools[].name': { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'pools[].upstreams': { file: 'test/proxy/upstream-failures.test.ts', title: 'a pool skips a refusing upstream and balances over the healthy ones' },
  'pools[].connect_timeout': {
    file: 'test/proxy/upstream-failures.test.ts',
    title: 'an upstream that never completes the connection gets 504 after connect_timeout, while a longer one keeps waiting',
  },
  'pools[].response_timeout': { file: 'test/proxy/upstream-failures.test.ts', title: 'an origin that does not answer in time gives 504' },
  'pools[].connections': {
    file: 'test/edge/limits.test.ts',
    title: 'a miss that finds no free origin connection within queue_timeout gets 504, not an endless wait',
  },
  'pools[].upload_connections': {
    file: 'test/edge/limits.test.ts',
    title: 'slow uploads hold only the upload connections: cache fills go on, a further upload gets 504 after queue_timeout',
  },
  'pools[].queue_timeout': {
    file: 'test/edge/limits.test.ts',
    title: 'a miss that finds no free origin connection within queue_timeout gets 504, not an endless wait',
  },

  routes: { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'routes[].name': { file: 'test/admin/health-endpoints.test.ts', title: '/metrics has the traffic metrics with exactly the spec labels' },
  'routes[].match': { file: 'test/proxy/single-node-caching.test.ts', title: 'a request matching no route gets 404 with a clear body' },
  'routes[].match.path_prefix': { file: 'test/proxy/single-node-caching.test.ts', title: 'a request matching no route gets 404 with a clear body' },
  'routes[].match.host': { file: 'test/proxy/route-table.test.ts', title: 'the most specific route answers: longest prefix first, then a route with a host' },
  'routes[].pool': { file: 'test/node/serve-process.test.ts', title: 'serves from a config file and stops cleanly on SIGTERM' },
  'routes[].cache': {
    file: 'test/http-caching/cache-results.test.ts',
    title: 'requests the cache does not handle: BYPASS (a route with caching off, POST, If-Match)',
  },
  'routes[].cache.enabled': {
    file: 'test/http-caching/cache-results.test.ts',
    title: 'requests the cache does not handle: BYPASS (a route with caching off, POST, If-Match)',
  },
  'routes[].cache.ttl_override': {
    file: 'test/proxy/single-node-caching.test.ts',
    title: 'caches for the configured time whatever the origin says, and forwards its headers unchanged',
  },
  'routes[].cache.stale_while_revalidate': { file: 'test/http-caching/rfc5861-stale.test.ts', title: 'cache.stale_while_revalidate applies when the origin gives none' },
  'routes[].cache.stale_if_error': {
    file: 'test/http-caching/rfc9111-4.2-freshness.test.ts',
    title: "svc: a route's cache.stale_if_error replaces stale_if_unreachable for that route",
  },
  'routes[].cache.max_error_ttl': { file: 'test/http-caching/cacheable-errors.test.ts', title: 'with max_error_ttl 0 a 500 is never stored, whatever its Cache-Control' },
  'routes[].refresh_before_expiry': {
    file: 'test/refresh/node-refresh.test.ts',
    title: 'a popular entry stays fresh across its expiry: the origin sees conditional refreshes, clients only HIT',
  },
  'routes[].refresh_min_hits': {
    file: 'test/refresh/node-refresh.test.ts',
    title: 'an unpopular entry is not refreshed (below_min_hits) and is revalidated by the request after its expiry',
  },
  'routes[].methods': {
    file: 'test/http-caching/cacheable-errors.test.ts',
    title: 'a method the route lists is forwarded, and its 2xx invalidates; one it does not list gets 405',
  },
  'routes[].strip_request_headers': {
    file: 'test/node/reload.test.ts',
    title: 'edge keys: route methods and stripped fields, pool upload options and trusted_proxies apply; limits and the wrong-token limit need a restart',
  },

  cluster: { file: 'test/e2e/cluster-strong.test.ts', title: 'a key owned by B, asked at A, is served from B and fetched from the origin once' },
  'cluster.mode': { file: 'test/e2e/cluster-eventual.test.ts', title: 'no peer fetch: each node fills from the origin on its own' },
  'cluster.node_name': { file: 'test/e2e/cluster-strong.test.ts', title: 'peers are listed by the API with state, mode and ring share' },
  'cluster.bind': { file: 'test/e2e/cluster-strong.test.ts', title: 'a key owned by B, asked at A, is served from B and fetched from the origin once' },
  'cluster.advertise': { file: 'test/transports/udp-security.test.ts', title: 'binding every interface needs an advertised address' },
  'cluster.transport': { file: 'test/e2e/cluster-libp2p.test.ts', title: 'two nodes over libp2p form one cluster, and a purge at one reaches the other' },
  'cluster.join': { file: 'test/e2e/cluster-strong.test.ts', title: 'peers are listed by the API with state, mode and ring share' },
  'cluster.peer_timeout': { file: 'test/e2e/cluster-paused-owner.test.ts', title: 'costs a request at most about the peer timeout, and a purge fan-out no more' },
  'cluster.lease': { file: 'test/e2e/cluster-paused-owner.test.ts', title: 'costs a request at most about the peer timeout, and a purge fan-out no more' },
  'cluster.secret': { file: 'test/e2e/cluster-security.test.ts', title: 'a process without the secret, or with another one, cannot join' },
  'cluster.insecure': { file: 'test/e2e/cluster-security.test.ts', title: 'says so: an ERROR at startup and a readiness condition, without leaving rotation' },
  tls: { file: 'test/tls/tls-listeners.test.ts', title: 'the listeners say https, and the node runs on its default threads' },
  'tls.certificates': {
    file: 'test/tls/tls-listeners.test.ts',
    title: 'SNI picks the certificate holding the name asked for; the first serves a client that names none of them',
  },
  'tls.certificates[].cert': {
    file: 'test/tls/tls-listeners.test.ts',
    title: 'a reload serves a new certificate to new connections on every thread; an open keep-alive connection keeps working',
  },
  'tls.certificates[].key': {
    file: 'test/tls/tls-listeners.test.ts',
    title: "a key that is not the certificate's, or a file that holds no certificate, fails validation naming its key",
  },
  'admin.tls': { file: 'test/tls/tls-listeners.test.ts', title: 'the admin API speaks TLS, and the dashboard session cookie is Secure there' },
  'admin.tls.certificates': { file: 'test/tls/tls-listeners.test.ts', title: 'the admin API speaks TLS, and the dashboard session cookie is Secure there' },
  'admin.tls.certificates[].cert': { file: 'test/tls/tls-listeners.test.ts', title: 'the admin API speaks TLS, and the dashboard session cookie is Secure there' },
  'admin.tls.certificates[].key': { file: 'test/tls/tls-listeners.test.ts', title: 'the admin API speaks TLS, and the dashboard session cookie is Secure there' },
  'cluster.tls': { file: 'test/transports/udp-security.test.ts', title: 'a peer with a certificate from another CA is refused, in both directions' },
  'cluster.tls.cert': { file: 'test/node/startup-checks.test.ts', title: 'a missing TLS file and a short SVC_ADMIN_TOKEN stop svc with their key and cause (exit 1)' },
  'cluster.tls.key': { file: 'test/node/startup-checks.test.ts', title: 'a missing TLS file and a short SVC_ADMIN_TOKEN stop svc with their key and cause (exit 1)' },
  'cluster.tls.ca': { file: 'test/transports/udp-security.test.ts', title: 'a peer with a certificate from another CA is refused, in both directions' },
  'cluster.libp2p': { file: 'test/e2e/cluster-libp2p.test.ts', title: 'two nodes over libp2p form one cluster, and a purge at one reaches the other' },
  'cluster.libp2p.data_dir': { file: 'test/e2e/cluster-libp2p.test.ts', title: 'two nodes over libp2p form one cluster, and a purge at one reaches the other' },
  'cluster.libp2p.allowed_peer_ids': { file: 'test/e2e/cluster-libp2p.test.ts', title: 'a node whose peer id is not allowed never becomes a member' },
  'cluster.gossip_keys': { file: 'test/transports/udp-security.test.ts', title: 'packets sealed with an unknown key, or in the clear, are dropped and counted' },

  tracing: { file: 'test/observe/tracing.test.ts', title: 'a miss is listener > pipeline > cache > origin, and the origin sees the origin span as parent' },
  'tracing.endpoint': { file: 'test/observe/tracing.test.ts', title: 'a miss is listener > pipeline > cache > origin, and the origin sees the origin span as parent' },
  'tracing.service_name': { file: 'test/observe/tracing.test.ts', title: 'a miss is listener > pipeline > cache > origin, and the origin sees the origin span as parent' },
  'tracing.sampling_rate': { file: 'test/observe/tracing.test.ts', title: 'at rate 0.5 about half the requests are traced, each wholly or not at all' },

  cdn: { file: 'test/cdn/cdn-propagation.test.ts', title: 'async: a purge is answered before the CDN answers, and reaches it as one files call with the bearer token' },
  'cdn.zone_id': { file: 'test/cdn/cdn-propagation.test.ts', title: 'async: a purge is answered before the CDN answers, and reaches it as one files call with the bearer token' },
  'cdn.api_token': { file: 'test/cdn/cdn-token.test.ts', title: 'cdn.api_token is used when set, CDN_API_TOKEN otherwise; with neither the node does not start' },
  'cdn.api_base_url': {
    file: 'test/cdn/cdn-propagation.test.ts',
    title: 'async: a purge is answered before the CDN answers, and reaches it as one files call with the bearer token',
  },
  'cdn.async': { file: 'test/cdn/cdn-propagation.test.ts', title: 'the answer waits for the CDN to confirm' },
  'cdn.timeout': { file: 'test/cdn/cdn-propagation.test.ts', title: 'a reset connection and a CDN that hangs are retried as network errors' },
  'cdn.propagate': { file: 'test/cdn/cdn-propagation.test.ts', title: 'propagate flags switch single operations off; with all off the status says enabled: false' },
  'cdn.propagate.purge': { file: 'test/cdn/cdn-propagation.test.ts', title: 'propagate flags switch single operations off; with all off the status says enabled: false' },
  'cdn.propagate.ban': { file: 'test/cdn/cdn-propagation.test.ts', title: 'propagate flags switch single operations off; with all off the status says enabled: false' },
  'cdn.propagate.refresh': { file: 'test/cdn/cdn-propagation.test.ts', title: 'propagate flags switch single operations off; with all off the status says enabled: false' },

  log: { file: 'test/observe/access-log.test.ts', title: 'query strings reach the access log only as log.access_query says: omit (default), hash or full' },
  'log.format': {
    file: 'test/node/serve-process.test.ts',
    title: 'SIGHUP and svc reload apply a new configuration in the running process; a refused one leaves it as it was',
  },
  'log.access_query': { file: 'test/observe/access-log.test.ts', title: 'query strings reach the access log only as log.access_query says: omit (default), hash or full' },
  trusted_proxies: {
    file: 'test/node/reload.test.ts',
    title: 'edge keys: route methods and stripped fields, pool upload options and trusted_proxies apply; limits and the wrong-token limit need a restart',
  },

  limits: { file: 'test/edge/limits.test.ts', title: 'a header section over limits.max_header_bytes is 431 on the data plane and the admin listener' },
  'limits.max_header_bytes': { file: 'test/edge/limits.test.ts', title: 'a header section over limits.max_header_bytes is 431 on the data plane and the admin listener' },
  'limits.max_header_fields': {
    file: 'test/edge/limits.test.ts',
    title: 'more field lines than limits.max_header_fields is 431 on the data plane and the admin listener; as many passes',
  },
  'limits.header_timeout': { file: 'test/edge/limits.test.ts', title: 'headers that do not arrive within limits.header_timeout get 408 and a closed connection' },
  'limits.body_idle_timeout': { file: 'test/edge/limits.test.ts', title: 'a request body that stalls for limits.body_idle_timeout gets 408; the origin request is abandoned' },
  'limits.keep_alive_timeout': { file: 'test/edge/limits.test.ts', title: 'an idle keep-alive connection is closed after limits.keep_alive_timeout' },
  'limits.max_in_flight_per_client': {
    file: 'test/edge/limits.test.ts',
    title: 'a client over limits.max_in_flight_per_client origin requests gets 429 with Retry-After; hits are not counted',
  },
};

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
}

/** Every key path of the schema: `a.b` for a nested key, `a[].b` for a key of a list's items. */
function keyPaths(node: SchemaNode, prefix = '', into = new Set<string>()): Set<string> {
  for (const alternative of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) keyPaths(alternative, prefix, into);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    into.add(path);
    keyPaths(child, path, into);
  }
  if (node.items !== undefined) keyPaths(node.items, `${prefix}[]`, into);
  return into;
}

const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url));
const TEST_CALL = /\b(?:test|it|requirement)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;

/** The titles of a test file's test() calls, with their escapes undone. */
function titlesIn(source: string): Set<string> {
  return new Set([...source.matchAll(TEST_CALL)].map((match) => match[2]!.replace(/\\(.)/g, '$1')));
}

const schemaPaths = keyPaths(configJsonSchema() as SchemaNode);

test('the schema walk finds keys at every depth: top level, blocks, list items and their blocks', () => {
  for (const path of ['listen', 'cluster.tls.key', 'routes[].cache.max_error_ttl', 'pools[].upstreams', 'cdn.propagate.ban']) {
    assert.ok(schemaPaths.has(path), `${path} is found`);
  }
});

test('every configuration key names the test that proves its effect', () => {
  const missing = [...schemaPaths].filter((path) => !(path in EFFECTS));
  assert.deepEqual(missing, [], 'keys without a row: add one naming a test that changes the key and sees svc change');
});

test('every row is a key of the schema', () => {
  const stale = Object.keys(EFFECTS).filter((path) => !schemaPaths.has(path));
  assert.deepEqual(stale, [], 'rows whose key is not in the schema');
});

test('every named test exists under its title in its file', () => {
  const titles = new Map<string, Set<string>>();
  const wrong: string[] = [];
  for (const [path, { file, title }] of Object.entries(EFFECTS)) {
    const absolute = `${REPOSITORY}${file}`;
    if (!existsSync(absolute)) {
      wrong.push(`${path}: no file ${file}`);
      continue;
    }
    if (!titles.has(file)) titles.set(file, titlesIn(readFileSync(absolute, 'utf8')));
    if (!titles.get(file)!.has(title)) wrong.push(`${path}: no test titled ${JSON.stringify(title)} in ${file}`);
  }
  assert.deepEqual(wrong, []);
});
