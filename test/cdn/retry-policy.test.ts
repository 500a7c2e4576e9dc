// Spec §6.3: which failed calls are retried, how many times, and after how long.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RETRIES, MAX_RETRY_AFTER_MS, parseRetryAfterMs, retryDelayMs } from '../../src/http/retry-policy.js';
import type { CallResult } from '../../src/http/call-result.js';

const rateLimited = (retryAfterMs?: number): CallResult => ({ outcome: 'rate_limited', retryAfterMs, message: '429' });
const serverError: CallResult = { outcome: 'server_error', status: 503, message: '503' };
const networkError: CallResult = { outcome: 'network_error', message: 'reset' };

describe('retry policy', () => {
  test('429, 5xx and network errors are retried 3 times, with exponential waits between half and all of 1, 2, 4 s', () => {
    for (const result of [rateLimited(), serverError, networkError]) {
      const low = [1, 2, 3].map((retry) => retryDelayMs(result, retry, () => 0));
      const high = [1, 2, 3].map((retry) => retryDelayMs(result, retry, () => 0.999999));
      assert.deepEqual(low, [500, 1000, 2000]);
      assert.deepEqual(high.map((ms) => Math.round(ms!)), [1000, 2000, 4000]);
      assert.equal(retryDelayMs(result, MAX_RETRIES + 1, () => 0.5), undefined, 'no fourth retry');
    }
  });

  test('Retry-After is a floor that jitter is added to', () => {
    assert.equal(retryDelayMs(rateLimited(5000), 1, () => 0), 5000);
    assert.equal(retryDelayMs(rateLimited(5000), 1, () => 0.5), 5250);
    assert.equal(retryDelayMs(rateLimited(0), 2, () => 0.5), 500);
  });

  test('a Retry-After beyond the bound ends the retries (the queue cools down instead)', () => {
    assert.equal(retryDelayMs(rateLimited(MAX_RETRY_AFTER_MS), 1, () => 0), MAX_RETRY_AFTER_MS);
    assert.equal(retryDelayMs(rateLimited(MAX_RETRY_AFTER_MS + 1), 1, () => 0), undefined);
  });

  test('success, other 4xx and an abandoned call are not retried', () => {
    for (const result of [{ outcome: 'ok' }, { outcome: 'refused', status: 400, message: '' }, { outcome: 'aborted' }] as CallResult[]) {
      assert.equal(retryDelayMs(result, 1, () => 0.5), undefined);
    }
  });

  test('Retry-After is read as seconds or as an HTTP-date', () => {
    const now = Date.UTC(2025, 0, 1, 12, 0, 0);
    assert.equal(parseRetryAfterMs('7', now), 7000);
    assert.equal(parseRetryAfterMs(' 0 ', now), 0);
    assert.equal(parseRetryAfterMs('Wed, 01 Jan 2025 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfterMs('Wed, 01 Jan 2025 11:00:00 GMT', now), 0, 'a date in the past means now');
    assert.equal(parseRetryAfterMs('soon', now), undefined);
    assert.equal(parseRetryAfterMs('-3', now), undefined);
    assert.equal(parseRetryAfterMs(undefined, now), undefined);
  });
});
