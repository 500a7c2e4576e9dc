import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  type ConfigIssue,
  ConfigError,
  formatConfigIssue,
  loadConfigFile,
  parseConfig,
  parseConfigText,
} from '../../src/config/index.js';
import { fixturePath, repoPath } from './fixture-path.js';
import { DEFAULT_STRIPPED_REQUEST_FIELDS } from '../../src/config/edge-defaults.js';

/** The smallest valid configuration, as a fresh object each test may change. */
function minimal(): Record<string, unknown> {
  return {
    pools: [{ name: 'p', upstreams: ['http://127.0.0.1:8081'] }],
    routes: [{ name: 'r', pool: 'p' }],
  };
}

function issuesOf(parse: () => unknown): ConfigIssue[] {
  try {
    parse();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.code, 'invalid_config');
    return [...error.issues];
  }
  assert.fail('expected the configuration to be rejected');
}

function linesOf(parse: () => unknown): string[] {
  return issuesOf(parse).map(formatConfigIssue);
}

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-config-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('defaults', () => {
  test('a minimal JSON file gets every default', async () => {
    const config = await loadConfigFile(fixturePath('minimal.json'));
    assert.deepEqual(config, {
      listen: '127.0.0.1:8080',
      hot_max_bytes: 268_435_456,
      max_object_bytes: 8_388_608,
      stale_if_unreachable: 300_000,
      max_active_bans: 10_000,
      client_write_idle_timeout: 60_000,
      admin: { listen: '127.0.0.1:9000', pprof_enabled: false, auth_failure_limit: 10, auth_failure_window: 60_000 },
      pools: [
        {
          name: 'origin',
          upstreams: ['http://127.0.0.1:8081'],
          connect_timeout: 2000,
          response_timeout: 30_000,
          connections: 64,
          upload_connections: 16,
          queue_timeout: 5_000,
        },
      ],
      routes: [
        {
          name: 'all',
          match: { path_prefix: '/' },
          pool: 'origin',
          cache: { enabled: true, max_error_ttl: 10_000 },
          refresh_before_expiry: false,
          refresh_min_hits: 2,
          methods: ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'],
          strip_request_headers: [...DEFAULT_STRIPPED_REQUEST_FIELDS],
        },
      ],
      tracing: { endpoint: '', service_name: 'svc', sampling_rate: 1 },
      log: { format: 'json', access_query: 'omit' },
      trusted_proxies: [],
      limits: { max_header_bytes: 16_384, max_header_fields: 100, header_timeout: 10_000, body_idle_timeout: 30_000, keep_alive_timeout: 5_000, max_in_flight_per_client: 32 },
    });
  });

  test('an empty cluster block is a strong-mode cluster named after the host', () => {
    const config = parseConfig({ ...minimal(), hop_limit: 1, cluster: { insecure: true } });
    assert.deepEqual(config.cluster, {
      mode: 'strong',
      node_name: hostname(),
      bind: '127.0.0.1:7946',
      transport: 'udp',
      join: [],
      peer_timeout: 1000,
      lease: 8000,
      insecure: true,
    });
  });

  test('warm and cdn blocks fill their defaults; cdn.timeout 0 means 10 s', () => {
    const config = parseConfig({ ...minimal(), warm: { path: '/tmp/w', max_bytes: 1000 }, cdn: { zone_id: 'z' } });
    assert.deepEqual(config.warm, { path: '/tmp/w', max_bytes: 1000, write_queue_length: 1024 });
    assert.deepEqual(config.cdn, {
      zone_id: 'z',
      api_token: '',
      api_base_url: 'https://api.cloudflare.com/client/v4',
      async: true,
      timeout: 10_000,
      propagate: { purge: true, ban: true, refresh: true },
    });
  });

  test('a cdn.timeout other than 0 is kept', () => {
    assert.equal(parseConfig({ ...minimal(), cdn: { zone_id: 'z', timeout: '2500ms' } }).cdn?.timeout, 2500);
  });
});

describe('a file setting every key', () => {
  test('YAML: values are kept and durations become milliseconds', async () => {
    const config = await loadConfigFile(fixturePath('full.yaml'));
    assert.equal(config.listen, '0.0.0.0:8080');
    assert.equal(config.admin.listen, '[::1]:9001');
    assert.equal(config.admin.token, '0123456789abcdef-admin');
    assert.equal(config.hop_limit, 2);
    assert.equal(config.stale_if_unreachable, 120_000);
    assert.equal(config.max_active_bans, 500);
    assert.deepEqual(config.warm, { path: '/var/cache/svc', max_bytes: 10_737_418_240, write_queue_length: 256 });
    assert.equal(config.pools[0]?.connect_timeout, 500);
    assert.equal(config.pools[0]?.response_timeout, 90_000);
    assert.deepEqual(config.routes[0]?.cache, {
      enabled: true,
      ttl_override: 3_600_000,
      stale_while_revalidate: 30_000,
      stale_if_error: 300_000,
      max_error_ttl: 5_000,
    });
    assert.deepEqual(config.routes[0]?.methods, ['GET', 'HEAD', 'PURGE']);
    assert.deepEqual(config.routes[0]?.strip_request_headers, ['cookie']);
    assert.deepEqual([config.pools[0]?.upload_connections, config.pools[0]?.queue_timeout], [4, 2_000]);
    assert.deepEqual([config.admin.auth_failure_limit, config.admin.auth_failure_window], [5, 300_000]);
    assert.deepEqual(config.trusted_proxies, ['10.0.0.0/8', 'fd00::/8']);
    assert.deepEqual(config.limits, { max_header_bytes: 8_192, max_header_fields: 64, header_timeout: 5_000, body_idle_timeout: 10_000, keep_alive_timeout: 75_000, max_in_flight_per_client: 8 });
    assert.deepEqual(config.routes[0]?.match, { path_prefix: '/static/', host: 'www.example.com' });
    assert.equal(config.routes[1]?.name, '');
    assert.equal(config.routes[1]?.cache.enabled, false);
    assert.equal(config.cluster?.transport, 'libp2p');
    assert.equal(config.cluster?.libp2p?.data_dir, '/var/lib/svc/libp2p');
    assert.equal(config.cluster?.peer_timeout, 500);
    assert.equal(config.cluster?.lease, 6000);
    assert.deepEqual(config.cluster?.secret, ['c3ZjLWZ1bGwteWFtbC1jbHVzdGVyLXNlY3JldC0wMDE=', 'c3ZjLWZ1bGwteWFtbC1jbHVzdGVyLXNlY3JldC0wMDI=']);
    assert.equal(config.tracing.sampling_rate, 0.25);
    assert.equal(config.cdn?.timeout, 10_000);
    assert.equal(config.cdn?.propagate.ban, false);
    assert.deepEqual(config.log, { format: 'pretty', access_query: 'hash' });
  });

  test('the same content as JSON gives the same configuration', async () => {
    const yamlText = await readFile(fixturePath('full.yaml'), 'utf8');
    const jsonPath = join(dir, 'full.json');
    await writeFile(jsonPath, JSON.stringify(parseYaml(yamlText), null, 2));
    assert.deepEqual(await loadConfigFile(jsonPath), await loadConfigFile(fixturePath('full.yaml')));
  });
});

describe('value errors name the key path and say what was expected and what was got', () => {
  const cases: [string, (config: Record<string, unknown>) => void, string][] = [
    [
      'a duration in words',
      (c) => {
        c.routes = [
          { name: 'a', pool: 'p' },
          { name: 'b', pool: 'p' },
          { name: 'c', pool: 'p', cache: { ttl_override: '30 seconds' } },
        ];
      },
      'routes[2].cache.ttl_override: expected a duration like "30s", got "30 seconds"',
    ],
    [
      'an upstream with another scheme',
      (c) => {
        c.pools = [{ name: 'p', upstreams: ['http://127.0.0.1:8081', 'ftp://x'] }];
      },
      'pools[0].upstreams[1]: expected an http(s)://host:port URL, got "ftp://x"',
    ],
    [
      'a port without a host',
      (c) => {
        c.admin = { listen: '9000' };
      },
      'admin.listen: expected host:port, got "9000"',
    ],
    [
      'a size as text',
      (c) => {
        c.hot_max_bytes = '256MiB';
      },
      'hot_max_bytes: expected an integer number of bytes greater than 0, got "256MiB"',
    ],
    [
      'a size of 0',
      (c) => {
        c.max_object_bytes = 0;
      },
      'max_object_bytes: expected an integer number of bytes greater than 0, got 0',
    ],
    [
      'no active ban allowed',
      (c) => {
        c.max_active_bans = 0;
      },
      'max_active_bans: expected an integer of at least 1, got 0',
    ],
    [
      'a write-idle timeout of 0',
      (c) => {
        c.client_write_idle_timeout = 0;
      },
      'client_write_idle_timeout: expected a duration greater than 0, like "60s", got 0',
    ],
    [
      'a fractional size',
      (c) => {
        c.hot_max_bytes = 1.5;
      },
      'hot_max_bytes: expected an integer number of bytes greater than 0, got 1.5',
    ],
    [
      'no data-plane worker',
      (c) => {
        c.workers = 0;
      },
      'workers: expected an integer of at least 1, got 0',
    ],
    [
      'a hop limit above 8',
      (c) => {
        c.hop_limit = 9;
      },
      'hop_limit: expected an integer from 1 to 8, got 9',
    ],
    [
      'an unknown cluster mode',
      (c) => {
        c.hop_limit = 1;
        c.cluster = { mode: 'fast', insecure: true };
      },
      'cluster.mode: expected "strong" or "eventual", got "fast"',
    ],
    [
      'an unknown transport',
      (c) => {
        c.cluster = { mode: 'eventual', transport: 'tcp', insecure: true };
      },
      'cluster.transport: expected "udp" or "libp2p", got "tcp"',
    ],
    [
      'a seed without a port',
      (c) => {
        c.cluster = { mode: 'eventual', join: ['10.0.0.1:7946', '10.0.0.2'], insecure: true };
      },
      'cluster.join[1]: expected host:port, got "10.0.0.2"',
    ],
    [
      'a sampling rate above 1',
      (c) => {
        c.tracing = { sampling_rate: 2 };
      },
      'tracing.sampling_rate: expected a number from 0 to 1, got 2',
    ],
    [
      'a tracing endpoint without a port',
      (c) => {
        c.tracing = { endpoint: 'http://otel' };
      },
      'tracing.endpoint: expected host:port or http(s)://host:port, got "http://otel"',
    ],
    [
      'a path prefix without its slash',
      (c) => {
        c.routes = [{ name: 'r', pool: 'p', match: { path_prefix: 'static' } }];
      },
      'routes[0].match.path_prefix: expected a path starting with "/", got "static"',
    ],
    [
      'a boolean written as text',
      (c) => {
        c.admin = { pprof_enabled: 'yes' };
      },
      'admin.pprof_enabled: expected true or false, got "yes"',
    ],
    [
      'no routes at all',
      (c) => {
        c.routes = [];
      },
      'routes: expected a list of at least one route, got an empty list',
    ],
    [
      'a block that is not an object',
      (c) => {
        c.tracing = 'on';
      },
      'tracing: expected an object, got "on"',
    ],
    [
      'a list where an object belongs',
      (c) => {
        c.admin = ['127.0.0.1:9000'];
      },
      'admin: expected an object, got a list',
    ],
    [
      'an empty value',
      (c) => {
        c.warm = null;
      },
      'warm: expected an object, got an empty value',
    ],
  ];
  for (const [name, change, line] of cases) {
    test(name, () => {
      const config = minimal();
      change(config);
      assert.deepEqual(
        linesOf(() => parseConfig(config)),
        [line],
      );
    });
  }

  test('a missing required key says what it needed', () => {
    const config = minimal();
    config.warm = { max_bytes: 10 };
    delete config.routes;
    assert.deepEqual(
      linesOf(() => parseConfig(config)),
      ['routes: expected a list of at least one route, got nothing', 'warm.path: expected a directory path, got nothing'],
    );
  });

  test('a too short admin token is described without being echoed', () => {
    const config = minimal();
    config.admin = { token: 'hunter2' };
    const lines = linesOf(() => parseConfig(config));
    assert.deepEqual(lines, ['admin.token: expected a string of at least 16 characters, got a string of 7 characters']);
  });

  test('a top level that is not an object', () => {
    assert.deepEqual(
      linesOf(() => parseConfigText('- 1\n- 2\n')),
      ['expected an object of configuration keys, got a list'],
    );
    assert.deepEqual(
      linesOf(() => parseConfigText('')),
      ['expected an object of configuration keys, got an empty value'],
    );
  });
});

describe('unknown keys are errors at every level', () => {
  test('at the top level, in a route cache, in admin, in cluster.tls and in a pool', () => {
    const config = minimal();
    config.colour = 'red';
    config.routes = [{ name: 'r', pool: 'p', cache: { enabled: true, colour: 'blue' } }];
    config.admin = { listen: '127.0.0.1:9000', tokn: 'x' };
    config.pools = [
      { name: 'p', upstreams: ['http://127.0.0.1:8081'] },
      { name: 'q', upstreams: ['http://127.0.0.1:8082'], timeout: '1s' },
    ];
    config.hop_limit = 1;
    config.cluster = { tls: { cert: 'c', key: 'k', ca: 'a', password: 'x' }, insecure: true };
    const issues = issuesOf(() => parseConfig(config));
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ['admin.tokn', 'cluster.tls.password', 'colour', 'pools[1].timeout', 'routes[0].cache.colour'],
    );
    const cacheIssue = issues.find((issue) => issue.path === 'routes[0].cache.colour');
    assert.equal(
      cacheIssue?.message,
      'unknown key "colour" at routes[0].cache (allowed: enabled, ttl_override, stale_while_revalidate, stale_if_error, max_error_ttl)',
    );
    assert.match(issues.find((issue) => issue.path === 'colour')?.message ?? '', /^unknown key "colour" at the top level /);
  });

  test('every unknown key of one object is reported, not only the first', () => {
    const config = minimal();
    config.routes = [{ name: 'r', pool: 'p', cache: { colour: 'blue', shade: 'dark', ttl: '1s' } }];
    assert.deepEqual(
      issuesOf(() => parseConfig(config)).map((issue) => issue.path),
      ['routes[0].cache.colour', 'routes[0].cache.shade', 'routes[0].cache.ttl'],
    );
  });

  test('an odd key name is quoted in the path', () => {
    const config = minimal();
    config.admin = { 'pprof enabled': true };
    assert.equal(issuesOf(() => parseConfig(config))[0]?.path, 'admin["pprof enabled"]');
  });
});

describe('cross-field rules', () => {
  test('a route must name an existing pool', () => {
    const config = minimal();
    config.routes = [{ name: 'r', pool: 'nope' }];
    assert.deepEqual(
      linesOf(() => parseConfig(config)),
      ['routes[0].pool: expected the name of a pool (one of "p"), got "nope"'],
    );
  });

  test('pool names and route names are unique', () => {
    const config = minimal();
    config.pools = [
      { name: 'p', upstreams: ['http://127.0.0.1:8081'] },
      { name: 'p', upstreams: ['http://127.0.0.1:8082'] },
    ];
    config.routes = [
      { name: '', pool: 'p' },
      { name: 'x', pool: 'p' },
      { name: '', pool: 'p', match: { path_prefix: '/a/' } },
    ];
    assert.deepEqual(linesOf(() => parseConfig(config)), [
      'pools[1].name: expected a unique pool name, got "p" (already used by pools[0])',
      'routes[2].name: expected a unique route name, got "" (already used by routes[0])',
    ]);
  });

  test('hop_limit is required in strong mode, explicit or by default', () => {
    const expectedLine = 'hop_limit: expected an integer from 1 to 8 (required when cluster.mode is strong), got nothing';
    for (const cluster of [{ insecure: true }, { mode: 'strong', insecure: true }]) {
      assert.deepEqual(
        linesOf(() => parseConfig({ ...minimal(), cluster })),
        [expectedLine],
      );
    }
  });

  test('hop_limit is optional in eventual mode and without a cluster', () => {
    assert.equal(parseConfig({ ...minimal(), cluster: { mode: 'eventual', insecure: true } }).hop_limit, undefined);
    assert.equal(parseConfig(minimal()).hop_limit, undefined);
  });

  test('cluster.tls needs cert, key and ca together', () => {
    const config = { ...minimal(), hop_limit: 1, cluster: { tls: { cert: '/c.pem' }, insecure: true } };
    assert.deepEqual(linesOf(() => parseConfig(config)), [
      'cluster.tls.ca: expected a file path, got nothing',
      'cluster.tls.key: expected a file path, got nothing',
    ]);
  });
});

test('every problem of a file is reported at once, in key-path order', () => {
  const text = [
    'listen: "9000"',
    'colour: red',
    'pools:',
    '  - name: p',
    '    upstreams: ["ftp://x"]',
    'routes:',
    '  - { name: r, pool: q }',
    '  - { name: s, pool: p, cache: { ttl_override: 30 } }',
    'cluster: { mode: strong, insecure: true }',
    '',
  ].join('\n');
  assert.deepEqual(
    issuesOf(() => parseConfigText(text, 'bad.yaml')).map((issue) => issue.path),
    ['colour', 'hop_limit', 'listen', 'pools[0].upstreams[0]', 'routes[0].pool', 'routes[1].cache.ttl_override'],
  );
});

describe('reading files', () => {
  test('a YAML syntax error names the line and column', async () => {
    const path = join(dir, 'broken.yaml');
    await writeFile(path, 'listen: "127.0.0.1:8080"\npools: [1,\nroutes: []\n');
    await assert.rejects(loadConfigFile(path), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.issues.length, 1);
      assert.equal(error.issues[0]?.path, '');
      assert.match(error.issues[0]?.message ?? '', new RegExp(`^${path} line 3, column 1: YAML syntax error: `));
      return true;
    });
  });

  test('a duplicated key is a syntax error with its position', () => {
    const lines = linesOf(() => parseConfigText('listen: "a:1"\nlisten: "b:2"\n', 'dup.yaml'));
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /^dup\.yaml line 2, column 1: YAML syntax error: .*unique/);
  });

  test('a missing file gives one clear message', async () => {
    const path = join(dir, 'absent.yaml');
    await assert.rejects(loadConfigFile(path), {
      code: 'invalid_config',
      issues: [{ path: '', message: `cannot read configuration file ${path}: no such file` }],
    });
  });

  test('the error message names the file and lists every problem', async () => {
    const path = join(dir, 'two-problems.yaml');
    await writeFile(path, 'listen: nope\nhot_max_bytes: -1\npools: []\nroutes: [{name: r, pool: p}]\n');
    await assert.rejects(loadConfigFile(path), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        [
          `invalid configuration in ${path}:`,
          '  hot_max_bytes: expected an integer number of bytes greater than 0, got -1',
          '  listen: expected host:port, got "nope"',
          '  pools: expected a list of at least one pool, got an empty list',
          '  routes[0].pool: expected the name of a pool (none is defined), got "p"',
        ].join('\n'),
      );
      return true;
    });
  });
});

test('the example in docs/configuration.md is a valid configuration', async () => {
  const docs = await readFile(repoPath('docs/configuration.md'), 'utf8');
  const example = /```yaml\n([\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(example !== undefined, 'docs/configuration.md has a ```yaml example');
  const config = parseConfigText(example, 'docs/configuration.md');
  assert.ok(config.routes.length > 0);
});

test('cluster.transport libp2p requires the cluster.libp2p block', () => {
  const config = { ...minimal(), hop_limit: 1, cluster: { transport: 'libp2p', insecure: true } };
  assert.deepEqual(linesOf(() => parseConfig(config)), [
    'cluster.libp2p: expected { data_dir, allowed_peer_ids } (required when cluster.transport is libp2p), got nothing',
  ]);
});

describe('cluster security', () => {
  const secret = Buffer.alloc(32, 9).toString('base64');
  const libp2p = { data_dir: '/var/lib/svc', allowed_peer_ids: [] };

  test('a clustered node needs a secret, or the written choice to run open', () => {
    assert.deepEqual(linesOf(() => parseConfig({ ...minimal(), hop_limit: 1, cluster: { join: ['10.0.0.2:7946'] } })), [
      'cluster.secret: expected a shared secret (base64 of at least 32 bytes, e.g. from `openssl rand -base64 32`) so that cluster traffic is authenticated, or cluster.insecure: true to run the cluster open to anyone who can reach its port, got nothing',
    ]);
    for (const cluster of [{ secret }, { secret: [secret, Buffer.alloc(40, 1).toString('base64')] }, { insecure: true }, { transport: 'libp2p', libp2p, secret }]) {
      assert.ok(parseConfig({ ...minimal(), hop_limit: 1, cluster }).cluster, JSON.stringify(cluster));
    }
  });

  test('on UDP, mutual TLS with sealed packets authenticates every path too', () => {
    const cluster = { tls: { cert: 'c', key: 'k', ca: 'a' }, gossip_keys: [Buffer.alloc(32, 3).toString('base64')] };
    assert.ok(parseConfig({ ...minimal(), hop_limit: 1, cluster }).cluster);
    assert.match(linesOf(() => parseConfig({ ...minimal(), hop_limit: 1, cluster: { tls: cluster.tls } }))[0] ?? '', /^cluster\.secret: /);
  });

  test('a key the transport cannot honour is refused, not ignored; insecure with a secret says nothing', () => {
    assert.deepEqual(
      linesOf(() =>
        parseConfig({
          ...minimal(),
          hop_limit: 1,
          cluster: { transport: 'libp2p', libp2p, secret, insecure: true, tls: { cert: 'c', key: 'k', ca: 'a' }, gossip_keys: [secret] },
        }),
      ),
      [
        'cluster.gossip_keys: expected nothing with cluster.transport libp2p, which cannot use it (noise encrypts its connections; set cluster.secret to authenticate them), got a list',
        'cluster.insecure: expected false or nothing when cluster.secret is set (the secret authenticates cluster traffic), got true',
        'cluster.tls: expected nothing with cluster.transport libp2p, which cannot use it (noise encrypts its connections; set cluster.secret to authenticate them), got an object',
      ],
    );
  });

  test('a secret shorter than 32 bytes is refused without being echoed', () => {
    const short = Buffer.alloc(31, 5).toString('base64');
    const lines = linesOf(() => parseConfig({ ...minimal(), hop_limit: 1, cluster: { secret: short } }));
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^cluster\.secret: expected /);
    assert.equal(lines[0]!.includes(short), false);
  });
});
