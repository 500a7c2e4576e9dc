import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig, parseDurationMs } from '../../src/config/index.js';

describe('parseDurationMs', () => {
  const valid: [string, number][] = [
    ['0', 0],
    ['0s', 0],
    ['250ms', 250],
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['2h500ms', 7_200_500],
    ['999999999h', 999_999_999 * 3_600_000],
  ];
  for (const [text, ms] of valid) {
    test(`"${text}" is ${ms} ms`, () => {
      assert.equal(parseDurationMs(text), ms);
    });
  }

  const invalid = ['', '30', '30 seconds', '1.5s', '-1s', '10S', '1d', 's', '30s1m', '1s1s', '1000000000h', ' 1s', '1s '];
  for (const text of invalid) {
    test(`"${text}" is not a duration`, () => {
      assert.equal(parseDurationMs(text), undefined);
    });
  }
});

describe('duration keys', () => {
  function withTimeout(value: unknown): unknown {
    return {
      pools: [{ name: 'p', upstreams: ['http://127.0.0.1:1'], connect_timeout: value }],
      routes: [{ name: 'r', pool: 'p' }],
    };
  }

  test('accept the number 0', () => {
    assert.equal(parseConfig(withTimeout(0)).pools[0]?.connect_timeout, 0);
  });

  test('reject other bare numbers, saying what was expected', () => {
    assert.throws(() => parseConfig(withTimeout(30)), {
      code: 'invalid_config',
      issues: [{ path: 'pools[0].connect_timeout', message: 'expected a duration like "30s", got 30' }],
    });
  });

  test('reject a value of another type', () => {
    assert.throws(() => parseConfig(withTimeout(true)), {
      issues: [{ path: 'pools[0].connect_timeout', message: 'expected a duration like "30s", got true' }],
    });
  });
});
