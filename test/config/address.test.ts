import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitHostPort } from '../../src/config/index.js';
import {
  LISTEN_ADDRESS_PATTERN,
  PEER_ADDRESS_PATTERN,
  TRACING_ENDPOINT_PATTERN,
  UPSTREAM_URL_PATTERN,
} from '../../src/config/address.js';

describe('address patterns', () => {
  const cases: [RegExp, string, boolean][] = [
    [LISTEN_ADDRESS_PATTERN, '127.0.0.1:8080', true],
    [LISTEN_ADDRESS_PATTERN, '[::1]:8080', true],
    [LISTEN_ADDRESS_PATTERN, 'localhost:0', true],
    [LISTEN_ADDRESS_PATTERN, 'edge-1.example.com:65535', true],
    [LISTEN_ADDRESS_PATTERN, '9000', false],
    [LISTEN_ADDRESS_PATTERN, ':9000', false],
    [LISTEN_ADDRESS_PATTERN, '127.0.0.1:65536', false],
    [LISTEN_ADDRESS_PATTERN, '127.0.0.1:080', false],
    [LISTEN_ADDRESS_PATTERN, '::1:8080', false],
    [PEER_ADDRESS_PATTERN, '10.0.0.1:7946', true],
    [PEER_ADDRESS_PATTERN, '10.0.0.1:0', false],
    [UPSTREAM_URL_PATTERN, 'http://127.0.0.1:8081', true],
    [UPSTREAM_URL_PATTERN, 'https://origin.example.com', true],
    [UPSTREAM_URL_PATTERN, 'http://[::1]:8081/', true],
    [UPSTREAM_URL_PATTERN, 'ftp://x', false],
    [UPSTREAM_URL_PATTERN, 'http://x:8081/path', false],
    [UPSTREAM_URL_PATTERN, 'http://user:pw@x:8081', false],
    [UPSTREAM_URL_PATTERN, '127.0.0.1:8081', false],
    [TRACING_ENDPOINT_PATTERN, '', true],
    [TRACING_ENDPOINT_PATTERN, 'otel:4318', true],
    [TRACING_ENDPOINT_PATTERN, 'https://otel:4318', true],
    [TRACING_ENDPOINT_PATTERN, 'otel', false],
    [TRACING_ENDPOINT_PATTERN, 'grpc://otel:4317', false],
  ];
  for (const [pattern, text, accepted] of cases) {
    test(`${accepted ? 'accepts' : 'rejects'} "${text}" (${pattern === LISTEN_ADDRESS_PATTERN ? 'listen' : pattern === PEER_ADDRESS_PATTERN ? 'peer' : pattern === UPSTREAM_URL_PATTERN ? 'upstream' : 'tracing'})`, () => {
      assert.equal(pattern.test(text), accepted);
    });
  }
});

describe('splitHostPort', () => {
  test('splits a host name or IPv4 address', () => {
    assert.deepEqual(splitHostPort('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(splitHostPort('localhost:0'), { host: 'localhost', port: 0 });
  });

  test('removes the brackets of an IPv6 address', () => {
    assert.deepEqual(splitHostPort('[::1]:9000'), { host: '::1', port: 9000 });
  });
});
