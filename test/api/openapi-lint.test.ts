// Issue 21 item 2: docs/openapi.yaml is a valid OpenAPI 3.0 document, so that generated clients work.
// The official OAS 3.0 JSON Schema (through @seriousme/openapi-schema-validator) checks its structure;
// two rules that schema cannot express are checked here: every `$ref` resolves, and `nullable` stands
// beside a `type` (OAS 3.0.3: "this keyword only takes effect if type is explicitly defined").
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { loadOpenApi } from './support/openapi-validator.js';

/** Every object in the document with the JSON Pointer that reaches it. */
function* objects(node: unknown, pointer = '#'): Generator<[string, Record<string, unknown>]> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [pointer, node as Record<string, unknown>];
  for (const [key, child] of Object.entries(node)) yield* objects(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

function resolves(document: unknown, ref: string): boolean {
  if (!ref.startsWith('#/')) return false;
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) return false;
  }
  return true;
}

describe('docs/openapi.yaml lint', () => {
  const document = loadOpenApi() as unknown as Record<string, unknown>;

  test('is valid against the official OpenAPI 3.0 schema', async () => {
    const result = await new Validator().validate(document);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
    assert.match(String(document.openapi), /^3\.0\.\d+$/);
  });

  test('every $ref resolves and every nullable schema has a type', () => {
    const problems: string[] = [];
    for (const [pointer, object] of objects(document)) {
      if (typeof object.$ref === 'string' && !resolves(document, object.$ref)) problems.push(`${pointer}: dangling $ref ${object.$ref}`);
      if (object.nullable === true && object.type === undefined) problems.push(`${pointer}: nullable without type`);
    }
    assert.deepEqual(problems, []);
  });
});
