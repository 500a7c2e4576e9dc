// Issue 14: the edge's configuration keys, with their defaults, and bad values named by key path.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, formatConfigIssue, parseConfig } from '../../src/config/index.js';

function minimal(extra: Record<string, unknown> = {}, route: Record<string, unknown> = {}, pool: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pools: [{ name: 'p', upstreams: ['http://127.0.0.1:8081'], ...pool }],
    routes: [{ name: 'r', pool: 'p', ...route }],
    ...extra,
  };
}

function problems(input: Record<string, unknown>): string[] {
  try {
    parseConfig(input);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  return [];
}

describe('edge configuration keys', () => {
  test('defaults', () => {
    const config = parseConfig(minimal());
    assert.deepEqual(config.trusted_proxies, []);
    assert.deepEqual(config.limits, {
      max_header_bytes: 16_384,
      max_header_fields: 100,
      header_timeout: 10_000,
      body_idle_timeout: 30_000,
      keep_alive_timeout: 5_000,
      max_in_flight_per_client: 32,
    });
    assert.equal(config.admin.auth_failure_limit, 10);
    assert.equal(config.admin.auth_failure_window, 60_000);
    assert.equal(config.pools[0]!.upload_connections, 16);
    assert.equal(config.pools[0]!.queue_timeout, 5_000);
    assert.deepEqual(config.routes[0]!.methods, ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);
    assert.ok(config.routes[0]!.strip_request_headers.includes('x-http-method-override'));
    assert.ok(config.routes[0]!.strip_request_headers.includes('x-original-url'));
    assert.equal(config.routes[0]!.cache.max_error_ttl, 10_000);
  });

  test('bad values are named by key path', () => {
    const lines = problems(
      minimal(
        { trusted_proxies: ['10.0.0.0/33', 'proxy.local'], limits: { header_timeout: 0, max_header_bytes: 100, max_header_fields: 0, keep_alive_timeout: '5 s' }, admin: { auth_failure_window: 0 } },
        { methods: ['get'], strip_request_headers: ['X-Upper'] },
        { queue_timeout: 'soon' },
      ),
    );
    for (const path of [
      'trusted_proxies[0]',
      'trusted_proxies[1]',
      'limits.header_timeout',
      'limits.max_header_bytes',
      'limits.max_header_fields',
      'limits.keep_alive_timeout',
      'admin.auth_failure_window',
      'routes[0].methods[0]',
      'routes[0].strip_request_headers[0]',
      'pools[0].queue_timeout',
    ]) {
      assert.ok(lines.some((line) => line.startsWith(`${path}: expected`)), `${path} in ${lines.join(' | ')}`);
    }
  });

  test('an empty method list is refused; an empty strip list forwards every field', () => {
    assert.ok(problems(minimal({}, { methods: [] })).some((line) => line.startsWith('routes[0].methods: expected')));
    assert.deepEqual(parseConfig(minimal({}, { strip_request_headers: [] })).routes[0]!.strip_request_headers, []);
  });
});
