import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigFile, parseConfig, redactConfig } from '../../src/config/index.js';
import { fixturePath } from './fixture-path.js';

test('secrets that are set are replaced; everything else is kept', async () => {
  const config = await loadConfigFile(fixturePath('full.yaml'));
  const redacted = redactConfig(config) as typeof config;
  assert.equal(redacted.admin.token, '[redacted]');
  assert.equal(redacted.cdn?.api_token, '[redacted]');
  assert.deepEqual(redacted.cluster?.secret, ['[redacted]', '[redacted]']);
  assert.deepEqual({ ...redacted, admin: config.admin, cdn: config.cdn, cluster: config.cluster }, config);
  assert.equal(JSON.stringify(redacted).includes('0123456789abcdef-admin'), false);
  assert.equal(JSON.stringify(redacted).includes('cdn-secret-token'), false);
});

test('the running configuration itself is left untouched', async () => {
  const config = await loadConfigFile(fixturePath('full.yaml'));
  redactConfig(config);
  assert.equal(config.admin.token, '0123456789abcdef-admin');
});

test('unset secrets stay unset, so the view shows that none is configured', () => {
  const config = parseConfig({
    pools: [{ name: 'p', upstreams: ['http://127.0.0.1:8081'] }],
    routes: [{ name: 'r', pool: 'p' }],
    cdn: { zone_id: 'z' },
  });
  const redacted = redactConfig(config) as typeof config;
  assert.equal(redacted.admin.token, undefined);
  assert.equal(redacted.cdn?.api_token, '');
});

test('cluster gossip keys are redacted one by one, so their count still shows', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const config = parseConfig({
    pools: [{ name: 'o', upstreams: ['http://127.0.0.1:1'] }],
    routes: [{ name: 'r', pool: 'o' }],
    hop_limit: 2,
    cluster: { gossip_keys: [key, key], secret: key },
  });
  const redacted = redactConfig(config) as typeof config;
  assert.deepEqual(redacted.cluster?.gossip_keys, ['[redacted]', '[redacted]']);
  assert.equal(redacted.cluster?.secret, '[redacted]');
  assert.equal(JSON.stringify(redacted).includes(key), false);
});
