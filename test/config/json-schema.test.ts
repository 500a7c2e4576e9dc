import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { configJsonSchema } from '../../src/config/index.js';
import { fixturePath } from './fixture-path.js';

type JsonSchema = Record<string, unknown>;

/** Keywords whose checks are implemented below; meeting any other one fails the test. */
const ANNOTATIONS = new Set(['$schema', 'description', 'default']);

/**
 * A small JSON Schema checker for the keywords the generated schema uses, so a document can be
 * checked against it without another dependency. It refuses keywords it does not know, so it can
 * never pass by skipping a rule.
 */
function violations(schema: JsonSchema, value: unknown, path: string): string[] {
  const found: string[] = [];
  for (const [keyword, rule] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    switch (keyword) {
      case 'type': {
        const ok =
          rule === 'object' ? typeof value === 'object' && value !== null && !Array.isArray(value)
          : rule === 'array' ? Array.isArray(value)
          : rule === 'integer' ? Number.isInteger(value)
          : typeof value === rule;
        if (!ok) found.push(`${path}: not ${String(rule)}`);
        break;
      }
      case 'properties':
        for (const [key, child] of Object.entries(rule as Record<string, JsonSchema>)) {
          const object = value as Record<string, unknown>;
          if (object[key] !== undefined) found.push(...violations(child, object[key], `${path}.${key}`));
        }
        break;
      case 'required':
        for (const key of rule as string[]) {
          if ((value as Record<string, unknown>)[key] === undefined) found.push(`${path}.${key}: required`);
        }
        break;
      case 'additionalProperties': {
        assert.equal(rule, false);
        const known = Object.keys((schema.properties ?? {}) as JsonSchema);
        for (const key of Object.keys(value as object)) {
          if (!known.includes(key)) found.push(`${path}.${key}: not allowed`);
        }
        break;
      }
      case 'items':
        (value as unknown[]).forEach((item, index) => found.push(...violations(rule as JsonSchema, item, `${path}[${index}]`)));
        break;
      case 'minItems':
        if ((value as unknown[]).length < (rule as number)) found.push(`${path}: fewer than ${String(rule)} items`);
        break;
      case 'minLength':
        if ((value as string).length < (rule as number)) found.push(`${path}: shorter than ${String(rule)}`);
        break;
      case 'minimum':
        if ((value as number) < (rule as number)) found.push(`${path}: below ${String(rule)}`);
        break;
      case 'maximum':
        if ((value as number) > (rule as number)) found.push(`${path}: above ${String(rule)}`);
        break;
      case 'pattern':
        if (!new RegExp(rule as string).test(value as string)) found.push(`${path}: does not match ${String(rule)}`);
        break;
      case 'const':
        if (value !== rule) found.push(`${path}: not ${JSON.stringify(rule)}`);
        break;
      case 'enum':
        if (!(rule as unknown[]).includes(value)) found.push(`${path}: not one of ${JSON.stringify(rule)}`);
        break;
      case 'anyOf':
        if ((rule as JsonSchema[]).every((option) => violations(option, value, path).length > 0)) {
          found.push(`${path}: matches no alternative`);
        }
        break;
      default:
        assert.fail(`the test checker does not know the keyword "${keyword}"`);
    }
  }
  return found;
}

describe('configJsonSchema', () => {
  const schema = configJsonSchema() as JsonSchema;
  const properties = schema.properties as Record<string, JsonSchema>;

  test('is a draft-07 schema of an object that allows no unknown keys', () => {
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.equal(schema.type, 'object');
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ['pools', 'routes']);
  });

  test('declares defaults and bounds as the valibot schema does', () => {
    assert.equal(properties.listen?.default, '127.0.0.1:8080');
    assert.equal(properties.hot_max_bytes?.default, 268_435_456);
    assert.equal(properties.hot_max_bytes?.type, 'integer');
    assert.deepEqual([properties.hop_limit?.minimum, properties.hop_limit?.maximum], [1, 8]);
    const cluster = properties.cluster as { properties: Record<string, JsonSchema> };
    assert.deepEqual(cluster.properties.mode?.enum, ['strong', 'eventual']);
    assert.equal(cluster.properties.mode?.default, 'strong');
  });

  test('leaves out the default computed from this machine (cluster.node_name)', () => {
    const cluster = properties.cluster as { properties: Record<string, JsonSchema> };
    assert.equal(cluster.properties.node_name?.type, 'string');
    assert.equal('default' in (cluster.properties.node_name ?? {}), false);
  });

  test('describes durations as written in the file', () => {
    const pool = (properties.pools?.items ?? {}) as { properties: Record<string, JsonSchema> };
    const timeout = pool.properties.connect_timeout ?? {};
    assert.equal(timeout.default, '2s');
    assert.deepEqual(violations(timeout, '1m30s', 'connect_timeout'), []);
    assert.deepEqual(violations(timeout, 0, 'connect_timeout'), []);
    assert.notDeepEqual(violations(timeout, '30 seconds', 'connect_timeout'), []);
    assert.notDeepEqual(violations(timeout, 30, 'connect_timeout'), []);
  });

  test('accepts the file that sets every key', async () => {
    const document: unknown = parseYaml(await readFile(fixturePath('full.yaml'), 'utf8'));
    assert.deepEqual(violations(schema, document, '$'), []);
  });

  test('rejects unknown keys and bad values at their paths', async () => {
    const document = parseYaml(await readFile(fixturePath('full.yaml'), 'utf8')) as Record<string, unknown>;
    const routes = document.routes as Record<string, unknown>[];
    const route = routes[0] as { cache: Record<string, unknown> };
    route.cache.colour = 'red';
    route.cache.ttl_override = '30 seconds';
    document.hop_limit = 9;
    assert.deepEqual(violations(schema, document, '$').sort(), [
      '$.hop_limit: above 8',
      '$.routes[0].cache.colour: not allowed',
      '$.routes[0].cache.ttl_override: matches no alternative',
    ]);
  });
});
