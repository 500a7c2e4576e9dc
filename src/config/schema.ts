// The whole configuration file as one valibot schema (spec §2.3 plus the keys of issue 2). Unknown
// keys are errors at every level, durations become milliseconds, and every default is declared here
// with its reason. docs/configuration.md documents the same keys for operators.

import { hostname } from 'node:os';
import * as v from 'valibot';
import {
  CDN_API_BASE_URL_PATTERN,
  CIDR_PATTERN,
  HOST_NAME_PATTERN,
  LISTEN_ADDRESS_PATTERN,
  PEER_ADDRESS_PATTERN,
  TRACING_ENDPOINT_PATTERN,
  UPSTREAM_URL_PATTERN,
} from './address.js';
import { duration } from './duration.js';
import { DEFAULT_FORWARDED_METHODS, DEFAULT_STRIPPED_REQUEST_FIELDS, FIELD_NAME_PATTERN, METHOD_PATTERN } from './edge-defaults.js';
import { expected, expectedSecret } from './messages.js';

/** Bounds of `hop_limit`: one hop reaches the owner; more than 8 would only hide a routing loop. */
export const HOP_LIMIT_MIN = 1;
export const HOP_LIMIT_MAX = 8;

/** Shortest accepted `admin.token`: 16 characters keep a guessed bearer token out of reach. */
export const ADMIN_TOKEN_MIN_LENGTH = 16;

/** One `cluster.gossip_keys` entry: base64 (with padding) of exactly 32 bytes, an AES-256 key. */
export const GOSSIP_KEY_PATTERN = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** A `cluster.secret`: base64 of at least 32 bytes (`openssl rand -base64 32` makes one). */
export const CLUSTER_SECRET_PATTERN = /^(?:[A-Za-z0-9+/]{4}){10}[A-Za-z0-9+/]{3,}={0,2}$/;
const clusterSecretText = v.pipe(
  v.string(expectedSecret('base64 of at least 32 bytes')),
  v.regex(CLUSTER_SECRET_PATTERN, expectedSecret('base64 of at least 32 bytes (e.g. from `openssl rand -base64 32`)')),
);

/** What `cdn.timeout: 0` means (spec §2.3). */
export const CDN_DEFAULT_TIMEOUT_MS = 10_000;

/** Cloudflare's API (spec §6.2 names its calls); another CDN with the same purge API can be named instead. */
export const CDN_DEFAULT_API_BASE_URL = 'https://api.cloudflare.com/client/v4';

/** A bearer token is visible ASCII (RFC 6750 §2.1); anything else could split the Authorization field. */
export const CDN_API_TOKEN_PATTERN = /^[\x21-\x7e]*$/;

function object<const TEntries extends v.ObjectEntries>(entries: TEntries, what = 'an object') {
  return v.strictObject(entries, expected(what));
}

function integer(min: number, what: string, description: string) {
  const message = expected(what);
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.description(description));
}

function boolean(description: string) {
  return v.pipe(v.boolean(expected('true or false')), v.description(description));
}

function nonEmptyString(what: string, description: string) {
  const message = expected(what);
  return v.pipe(v.string(message), v.minLength(1, message), v.description(description));
}

function matching(pattern: RegExp, what: string, description: string) {
  const message = expected(what);
  return v.pipe(v.string(message), v.regex(pattern, message), v.description(description));
}

/** A duration that must be more than 0 (a timeout of 0 would mean none, or an instant one). */
function positiveDuration(description: string) {
  return v.pipe(duration(description), v.minValue(1, expected('a duration greater than 0')));
}

function listenAddress(description: string) {
  return matching(LISTEN_ADDRESS_PATTERN, 'host:port', description);
}

function list<const TItem extends v.GenericSchema>(item: TItem, minItems: number, what: string, description: string) {
  const message = expected(what);
  return v.pipe(v.array(item, message), v.minLength(minItems, message), v.description(description));
}

/** One certificate a TLS listener serves; SNI picks it by the DNS names it holds (src/tls/). */
const listenerCertificateSchema = object({
  cert: nonEmptyString('a file path', 'PEM certificate, the leaf first and then its chain'),
  key: nonEmptyString('a file path', 'PEM private key of that certificate'),
});

/**
 * TLS on a listener (`tls` for the data plane, `admin.tls`): absent, the listener speaks plain HTTP.
 * No default: certificates are the operator's. Versions (1.2 and 1.3) and ALPN are svc's, not keys.
 */
const listenerTlsSchema = object({
  certificates: list(
    listenerCertificateSchema,
    1,
    'a list of at least one { cert, key }',
    'certificates served, picked by SNI among their DNS names; the first for a client that names none of them',
  ),
});

const adminSchema = object({
  /** Loopback only by default: the admin API can purge and ban, so exposing it is a deliberate choice. */
  listen: v.optional(listenAddress('admin listener, host:port'), '127.0.0.1:9000'),
  /** Absent: the admin API speaks plain HTTP, as on its loopback default. */
  tls: v.optional(listenerTlsSchema),
  /** No default: without it `SVC_ADMIN_TOKEN` or a generated token is used (spec §5 item 2). */
  token: v.optional(
    v.pipe(
      v.string(expectedSecret('a string')),
      v.minLength(ADMIN_TOKEN_MIN_LENGTH, expectedSecret(`a string of at least ${ADMIN_TOKEN_MIN_LENGTH} characters`)),
      v.description('admin bearer token (secret)'),
    ),
  ),
  /** Off (spec §2.3): profiling endpoints expose internals and cost CPU while sampled. */
  pprof_enabled: v.optional(boolean('mount /debug/pprof/* on the admin listener'), false),
  /**
   * 10 wrong tokens per address and window: enough for an operator's typos, while guessing a token
   * of 16 characters or more at that pace takes longer than the universe has.
   */
  auth_failure_limit: v.optional(
    integer(1, 'an integer of at least 1', 'wrong-token attempts per client address and window before 429'),
    10,
  ),
  /** 1 minute: a locked-out operator waits at most this long. */
  auth_failure_window: v.optional(positiveDuration('window over which wrong-token attempts are counted'), '1m'),
});

const warmSchema = object({
  /** Required: where the disk tier lives is the operator's decision. */
  path: nonEmptyString('a directory path', 'directory of the warm (disk) tier'),
  /** Required: the disk budget depends on the machine. */
  max_bytes: integer(1, 'an integer number of bytes greater than 0', 'capacity of the warm tier in bytes'),
  /** 1024 writes absorb a burst of misses; beyond that, writes are dropped rather than held in memory. */
  write_queue_length: v.optional(
    integer(1, 'an integer of at least 1', 'bounded queue of pending asynchronous disk writes'),
    1024,
  ),
});

const poolSchema = object({
  name: nonEmptyString('a non-empty pool name', 'pool name, referenced by routes[].pool'),
  upstreams: list(
    matching(UPSTREAM_URL_PATTERN, 'an http(s)://host:port URL', 'origin URL, http(s)://host:port'),
    1,
    'a list of at least one upstream URL',
    'origins of this pool, balanced; a failing one is skipped',
  ),
  /** 2 s: a healthy origin on the same network accepts a connection in milliseconds. */
  connect_timeout: v.optional(duration('time allowed to open a connection to an upstream'), '2s'),
  /** 30 s: long enough for slow dynamic pages, short enough that a hung origin answers 504. */
  response_timeout: v.optional(duration('time allowed for an upstream to send its response headers'), '30s'),
  /** 64: parallel enough for one busy origin, and a bound (undici's Pool has none by default). */
  connections: v.optional(integer(1, 'an integer of at least 1', 'keep-alive connections per upstream for requests without a body'), 64),
  /** 16: requests with a body are the minority; slow uploads can hold these, never `connections`. */
  upload_connections: v.optional(integer(1, 'an integer of at least 1', 'connections per upstream for requests with a body'), 16),
  /** 5 s: past it a free connection is unlikely soon, and a 504 tells the client more than a hang. */
  queue_timeout: v.optional(duration('longest wait for a free upstream connection before 504'), '5s'),
});

const routeCacheSchema = object({
  /** Caching is what a route is for; BYPASS is the exception an operator asks for. */
  enabled: v.optional(boolean('false answers every request of this route with BYPASS'), true),
  /** No default: upstream Cache-Control decides unless the operator overrides it. */
  ttl_override: v.optional(duration('cache lifetime regardless of upstream Cache-Control')),
  /** No default: serving stale content is opt-in (RFC 5861). */
  stale_while_revalidate: v.optional(duration('window for serving stale while revalidating')),
  /** No default: serving stale content is opt-in (RFC 5861). */
  stale_if_error: v.optional(duration('window for serving stale when the origin fails')),
  /**
   * 10 s: absorbs a burst of requests to a failing origin, while a 4xx/5xx cached by mistake (or by
   * an attacker who made the origin fail) is gone within seconds. 0 stores none of them.
   */
  max_error_ttl: v.optional(duration('longest lifetime of a stored 4xx/5xx that RFC 9110 does not call heuristically cacheable'), '10s'),
});

const routeMatchSchema = object({
  /** "/" matches every path, so a single route needs no match block. */
  path_prefix: v.optional(matching(/^\//, 'a path starting with "/"', 'path prefix; the longest wins'), '/'),
  /** No default: a route without a host matches every host. */
  host: v.optional(matching(HOST_NAME_PATTERN, 'a host name', 'host name the request must carry')),
});

const routeSchema = object({
  /** Required, but may be "": the metric label is then `host:path_prefix`. */
  name: v.pipe(v.string(expected('a string')), v.description('route name, the `route` metric label')),
  /** Absent: the match block's own defaults, which match every request. */
  match: v.optional(routeMatchSchema, {}),
  pool: nonEmptyString('the name of a pool', 'pool this route forwards to'),
  /** Absent: the cache block's own defaults, caching per RFC 9111. */
  cache: v.optional(routeCacheSchema, {}),
  /** Off: background refresh spends origin requests, so it is enabled per route. */
  refresh_before_expiry: v.optional(boolean('refresh popular entries in the background before they expire'), false),
  /** 2 hits: an object requested once is not worth an origin request to keep warm. */
  refresh_min_hits: v.optional(integer(1, 'an integer of at least 1', 'hits before an entry is refreshed'), 2),
  /**
   * The methods of a web site and its APIs. Anything else (PURGE, BAN, TRACE, WebDAV's…) gets 405
   * from svc: forwarded, an origin's 2xx to it would invalidate cached entries (RFC 9111 §4.4).
   */
  methods: v.optional(
    list(
      matching(METHOD_PATTERN, 'an upper-case method name', 'method'),
      1,
      'a non-empty list of methods',
      'request methods forwarded to the origin; others get 405',
    ),
    [...DEFAULT_FORWARDED_METHODS],
  ),
  /** Method and URL overrides, and host or scheme hints that svc does not key (see edge-defaults.ts). */
  strip_request_headers: v.optional(
    list(
      matching(FIELD_NAME_PATTERN, 'a lower-case header name', 'header name'),
      0,
      'a list of header names',
      'request headers removed before the origin; replaces the default list',
    ),
    [...DEFAULT_STRIPPED_REQUEST_FIELDS],
  ),
});

/** All three or none: a certificate needs its key, and peers are verified against the CA. */
const clusterTlsSchema = object({
  cert: nonEmptyString('a file path', 'PEM certificate of this node'),
  key: nonEmptyString('a file path', 'PEM private key of this node'),
  ca: nonEmptyString('a file path', 'PEM CA bundle that peer certificates must chain to'),
});

const clusterSchema = object({
  /** strong (spec §1.4): consistent-hash ownership and fan-out purges that reach all nodes in 1 s. */
  mode: v.optional(
    v.pipe(v.picklist(['strong', 'eventual'], expected('"strong" or "eventual"')), v.description('cluster mode')),
    'strong',
  ),
  /** The host name: stable across restarts and readable in peer lists, unlike a random id. */
  node_name: v.optional(nonEmptyString('a non-empty node name', 'unique node name in the cluster'), () => hostname()),
  /** Loopback: a node joins a network only when the operator names an address to bind. */
  bind: v.optional(matching(PEER_ADDRESS_PATTERN, 'host:port', 'gossip listener, host:port'), '127.0.0.1:7946'),
  /** No default: peers are told the bind address unless NAT needs another. */
  advertise: v.optional(matching(PEER_ADDRESS_PATTERN, 'host:port', 'address peers use to reach this node')),
  /** udp: SWIM over UDP with TCP for reliable requests needs no extra peer discovery. */
  transport: v.optional(
    v.pipe(v.picklist(['udp', 'libp2p'], expected('"udp" or "libp2p"')), v.description('cluster transport')),
    'udp',
  ),
  /** Empty: the first node of a cluster has nobody to join. */
  join: v.optional(
    list(matching(PEER_ADDRESS_PATTERN, 'host:port', 'seed peer'), 0, 'a list of host:port', 'gossip seed list'),
    [],
  ),
  /**
   * 1 s: the most a node waits for a peer before it goes on without it: a peer fetch (then the origin),
   * an invalidation's HTTP fan-out (gossip still carries it), a catch-up request. A LAN peer answers
   * in milliseconds, so only a suspect, paused or dead peer ever costs this (issue 16).
   */
  peer_timeout: v.optional(
    v.pipe(duration('longest wait for a peer (peer fetch, fan-out) before going on without it'), v.minValue(1, expected('a duration above 0, like "1s"'))),
    '1s',
  ),
  /**
   * How long a node's contact with a majority of its view lasts (cluster/lease.ts): in strong mode a
   * node serves from its cache only while it holds one. 8 s: twice the failure detector's suspicion
   * timeout for a cluster of up to 10 members (4 × log10(10) × the 1 s probe interval), so a member
   * is declared suspect well within it, and short enough that a strong purge that misses a member
   * waits at most this long before it answers.
   */
  lease: v.optional(v.pipe(duration('how long contact with a majority of the cluster lasts'), v.minValue(400, expected('a duration of at least 400ms, like "8s"'))), '8s'),
  /**
   * No default: only the operator can share a secret among the nodes. Secret. Authenticates and
   * encrypts every path of every transport (packets, requests, peer fetch); a list rotates secrets:
   * the first seals, every one opens (docs/security.md). Without it, a clustered node refuses to start
   * unless `insecure` says otherwise in writing (or, on UDP, `tls` and `gossip_keys` are both set).
   */
  secret: v.optional(
    v.pipe(
      v.union([clusterSecretText, v.pipe(v.array(clusterSecretText), v.minLength(1))], expectedSecret('a base64 secret or a non-empty list of them')),
      v.description('shared cluster secret (base64, at least 32 bytes), or a list of them with the current one first (secret)'),
    ),
  ),
  /** false: cluster traffic must be authenticated; true is the operator's written choice to run open. */
  insecure: v.optional(boolean('run the cluster without authenticated traffic (not recommended)'), false),
  /** No default: TLS needs certificates only the operator has. */
  tls: v.optional(clusterTlsSchema),
  /** Required with `transport: libp2p` (docs/libp2p.md): where the node key lives, and who may connect. */
  libp2p: v.optional(
    object({
      /** The node's libp2p key is kept here (mode 0600), so its peer id survives restarts. */
      data_dir: nonEmptyString('a directory path', 'directory of the libp2p node key'),
      /** Peers are served only when their peer id is listed (noise authenticates keys, not certificates). */
      allowed_peer_ids: list(nonEmptyString('a libp2p peer id', 'allowed peer id'), 0, 'a list of peer ids', 'peer ids allowed to connect'),
    }),
  ),
  /**
   * Absent: gossip packets are sealed only when the operator supplies shared keys (a WARN says so).
   * Secret. Primary first; every key opens packets, so keys rotate without downtime (memberlist keyring).
   */
  gossip_keys: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string(expectedSecret('base64 of 32 bytes')),
          v.regex(GOSSIP_KEY_PATTERN, expectedSecret('base64 of 32 bytes (44 characters ending in "=")')),
        ),
        expected('a list of base64 keys'),
      ),
      v.minLength(1, expected('a non-empty list of base64 keys')),
      v.description('AES-256-GCM keys sealing gossip packets, base64 of 32 bytes each, primary first (secret)'),
    ),
  ),
});

const samplingRateMessage = expected('a number from 0 to 1');

const tracingSchema = object({
  /** Empty: tracing is off until an OTLP collector is named (spec §2.3). */
  endpoint: v.optional(
    matching(TRACING_ENDPOINT_PATTERN, 'host:port or http(s)://host:port', 'OTLP/HTTP export target'),
    '',
  ),
  /** The name of the product, so spans are found without configuration. */
  service_name: v.optional(nonEmptyString('a non-empty string', 'service name on spans'), 'svc'),
  /** 1: when tracing is switched on, an operator expects to see every request until told otherwise. */
  sampling_rate: v.optional(
    v.pipe(
      v.number(samplingRateMessage),
      v.minValue(0, samplingRateMessage),
      v.maxValue(1, samplingRateMessage),
      v.description('fraction of requests traced'),
    ),
    1,
  ),
});

const cdnPropagateSchema = object({
  /** Forwarding is the point of the CDN block (spec §2.3); each operation can be switched off. */
  purge: v.optional(boolean('forward POST /v1/purge'), true),
  ban: v.optional(boolean('forward POST /v1/ban'), true),
  refresh: v.optional(boolean('forward POST /v1/refresh'), true),
});

const cdnSchema = object({
  /** Required: the zone is the one thing the CDN API cannot guess. */
  zone_id: nonEmptyString('a non-empty zone id', 'CDN zone identifier'),
  /** Empty: the token is better kept in CDN_API_TOKEN than in a file (spec §2.3). */
  api_token: v.optional(
    v.pipe(
      v.string(expectedSecret('a string')),
      v.regex(CDN_API_TOKEN_PATTERN, expectedSecret('a token of visible ASCII characters')),
      v.description('CDN API token (secret)'),
    ),
    '',
  ),
  /** Cloudflare's, whose zone purge API svc speaks; tests and CDNs with the same API name their own. */
  api_base_url: v.optional(
    matching(
      CDN_API_BASE_URL_PATTERN,
      'an https:// URL (http:// only to a loopback address) without user, query or fragment',
      'base URL of the CDN API; purges go to {base}/zones/{zone_id}/purge_cache',
    ),
    CDN_DEFAULT_API_BASE_URL,
  ),
  /** true (spec §6.3): a slow CDN API must not hold up the admin response. */
  async: v.optional(boolean('answer before the CDN call completes'), true),
  /** 0 means 10 s (spec §2.3), resolved here so consumers read plain milliseconds. */
  timeout: v.optional(
    v.pipe(
      duration('timeout per CDN API call; 0 means 10s'),
      v.transform((timeoutMs: number) => (timeoutMs === 0 ? CDN_DEFAULT_TIMEOUT_MS : timeoutMs)),
    ),
    0,
  ),
  /** Absent: every operation is forwarded. */
  propagate: v.optional(cdnPropagateSchema, {}),
});

/** How the access log writes a request's query string (issue 21 item 8). */
export const ACCESS_QUERY_MODES = ['omit', 'hash', 'full'] as const;

const logSchema = object({
  /** json: one object per line (spec §2.4) for collectors; pretty is for a person at a terminal. */
  format: v.optional(
    v.pipe(v.picklist(['json', 'pretty'], expected('"json" or "pretty"')), v.description('log line format; `svc serve --log-format` overrides it')),
    'json',
  ),
  /**
   * omit: query strings carry secrets (tokens, reset links, personal data) that have no place in logs,
   * so the access log's `path` leaves them out unless the operator asks for a keyed hash or the whole.
   */
  access_query: v.optional(
    v.pipe(
      v.picklist(ACCESS_QUERY_MODES, expected('"omit", "hash" or "full"')),
      v.description('query string in the access log `path`: omit, hash (keyed per process) or full'),
    ),
    'omit',
  ),
});

const limitsSchema = object({
  /** 16 KiB, Node's default: far above what browsers send, small enough to bound parsing. */
  max_header_bytes: v.optional(
    integer(1024, 'an integer number of bytes of at least 1024', 'largest request header section; 431 beyond'),
    16_384,
  ),
  /**
   * 100, Envoy's `max_headers_count`: browsers send 10 to 30 fields; a client sending thousands of
   * short ones pushes the fields a proxy adds past an origin's own limit (Node keeps 2,000).
   */
  max_header_fields: v.optional(integer(1, 'an integer of at least 1', 'most header fields in a request; 431 beyond'), 100),
  /** 10 s: a client on a slow link sends its headers within a second or two; slowloris does not. */
  header_timeout: v.optional(positiveDuration('time allowed for a request\'s headers to arrive; 408 after it'), '10s'),
  /** 30 s: a stalled upload releases its origin connection within half a minute. */
  body_idle_timeout: v.optional(positiveDuration('longest silence while a request body is read; 408 after it'), '30s'),
  /** 5 s, Node's default: idle connections are cheap but not free under a connection flood. */
  keep_alive_timeout: v.optional(positiveDuration('how long an idle keep-alive connection is kept open'), '5s'),
  /** 32: half of a pool's default connections, so no one client can take a whole pool. */
  max_in_flight_per_client: v.optional(
    integer(1, 'an integer of at least 1', 'origin requests one client address may have in flight; 429 beyond'),
    32,
  ),
});

const hopLimitMessage = expected(`an integer from ${HOP_LIMIT_MIN} to ${HOP_LIMIT_MAX}`);

export const configSchema = object({
  /** Loopback: a fresh install should not serve the network before the operator says so. */
  listen: v.optional(listenAddress('data-plane listener, host:port'), '127.0.0.1:8080'),
  /** Absent: the data plane speaks plain HTTP; present, `listen` terminates TLS (one listener, either). */
  tls: v.optional(listenerTlsSchema),
  /** 256 MiB: a useful working set that fits beside Node on a small machine. */
  hot_max_bytes: v.optional(
    integer(1, 'an integer number of bytes greater than 0', 'capacity of the hot (memory) tier in bytes'),
    268_435_456,
  ),
  /**
   * Absent: the available parallelism, one data-plane thread per core (src/node/workers/worker-count.ts).
   */
  workers: v.optional(integer(1, 'an integer of at least 1', 'data-plane threads over the one cache; 1 serves from the main thread alone')),
  /** 8 MiB: larger bodies would evict many small objects; they are passed through, not stored. */
  max_object_bytes: v.optional(
    integer(1, 'an integer number of bytes greater than 0', 'largest body stored; larger ones pass through'),
    8_388_608,
  ),
  /**
   * 5 minutes: rides out an origin restart, a deploy or a short network fault with the pages svc
   * already holds, while a longer outage shows as errors rather than as ever older content. Only for
   * an origin that gives no answer at all (RFC 9111 §4.2.4 lets a disconnected cache serve stale), never
   * against no-cache, must-revalidate, proxy-revalidate or s-maxage; a route's cache.stale_if_error
   * replaces it (docs/http-caching.md, "Stale serving").
   */
  stale_if_unreachable: v.optional(
    duration('how long past expiry a stored response is served when the origin cannot be reached; 0 turns it off'),
    '5m',
  ),
  /**
   * 60 s, nginx's send_timeout and Varnish's idle_send_timeout: a client whose socket accepts no bytes of
   * its answer for this long is cut off, that client alone; the fill it read from goes on for the others.
   */
  client_write_idle_timeout: v.optional(
    v.pipe(
      duration('time a client may accept no bytes of its answer before it is cut off; more than 0'),
      v.minValue(1, expected('a duration greater than 0, like "60s"')),
    ),
    '60s',
  ),
  /** No default: required when the cluster runs in strong mode (checked with the other cross-field rules). */
  hop_limit: v.optional(
    v.pipe(
      v.number(hopLimitMessage),
      v.integer(hopLimitMessage),
      v.minValue(HOP_LIMIT_MIN, hopLimitMessage),
      v.maxValue(HOP_LIMIT_MAX, hopLimitMessage),
      v.description('bound on peer-fetch hops (strong mode)'),
    ),
  ),
  /**
   * 10,000: one ban every 9 seconds for the 24 hours a ban lives, at about 1.5 KB each; without a
   * bound, bans are a way to exhaust a node's memory (docs/invalidation.md).
   */
  max_active_bans: v.optional(
    integer(1, 'an integer of at least 1', 'active bans at most; a new ban beyond it is refused with 429'),
    10_000,
  ),
  /** Absent: the admin block's own defaults (loopback listener, no token in the file). */
  admin: v.optional(adminSchema, {}),
  /** Absent: no warm tier, nothing is written to disk unless asked. */
  warm: v.optional(warmSchema),
  /** Required: a proxy without an upstream has nothing to serve. */
  pools: list(poolSchema, 1, 'a list of at least one pool', 'upstream pools'),
  /** Required: without a route every request would be a 404. */
  routes: list(routeSchema, 1, 'a list of at least one route', 'routes, matched by path_prefix and host'),
  /** Absent: a single node. */
  cluster: v.optional(clusterSchema),
  /** Absent: the tracing block's own defaults, which leave tracing off. */
  tracing: v.optional(tracingSchema, {}),
  /** Absent: invalidations stay in this service. */
  cdn: v.optional(cdnSchema),
  /** Absent: the log block's own defaults (JSON lines, no query strings in the access log). */
  log: v.optional(logSchema, {}),
  /**
   * Empty: no peer is believed about the client's address, scheme or host; every X-Forwarded-* and
   * Forwarded field a client sends is replaced (docs/security.md).
   */
  trusted_proxies: v.optional(
    list(
      matching(CIDR_PATTERN, 'an IP address or CIDR network', 'trusted proxy address or network'),
      0,
      'a list of IP addresses or CIDR networks',
      'proxies whose X-Forwarded-For/-Proto/-Host and Forwarded fields are believed',
    ),
    [],
  ),
  /** Absent: the limits block's own defaults. */
  limits: v.optional(limitsSchema, {}),
}, 'an object of configuration keys');

/** The validated configuration: the file's snake_case keys, defaults applied, durations in milliseconds. */
export type Config = v.InferOutput<typeof configSchema>;
