// Validates live admin API answers against docs/openapi.yaml with ajv. OpenAPI 3.0 schemas are
// almost JSON Schema: `$ref`s into components are inlined and `nullable: true` becomes a `null`
// alternative, which is all this document needs.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

export interface OpenApiOperation {
  responses: Record<string, OpenApiResponse | { $ref: string }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, OpenApiResponse> };
}

export const OPENAPI_PATH = new URL('../../../../docs/openapi.yaml', import.meta.url);

export function loadOpenApi(): OpenApiDocument {
  return parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
}

function lookup(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part];
    if (node === undefined) throw new Error(`dangling $ref ${ref}`);
  }
  return node;
}

/** The schema as plain JSON Schema: refs inlined, `nullable` turned into `anyOf [schema, null]`. */
export function toJsonSchema(document: OpenApiDocument, schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(document, item));
  if (schema === null || typeof schema !== 'object') return schema;
  const record = schema as Record<string, unknown>;
  if (typeof record.$ref === 'string') return toJsonSchema(document, lookup(document, record.$ref));
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === 'nullable') continue;
    // Property names and examples are data, not schemas.
    converted[key] = key === 'required' || key === 'enum' ? value : toJsonSchema(document, value);
  }
  if (record.nullable === true) return { anyOf: [converted, { type: 'null' }] };
  return converted;
}

export function resolveResponse(document: OpenApiDocument, response: OpenApiResponse | { $ref: string }): OpenApiResponse {
  return '$ref' in response ? (lookup(document, response.$ref) as OpenApiResponse) : response;
}

export class OpenApiValidator {
  private readonly ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  private readonly cache = new Map<unknown, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {}

  /** Errors of `value` against an OpenAPI schema; empty when it conforms. */
  errors(schema: unknown, value: unknown): string[] {
    let validate = this.cache.get(schema);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(this.document, schema) as object);
      this.cache.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
  }
}
