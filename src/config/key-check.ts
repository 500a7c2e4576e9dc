// Unknown and missing keys, found by walking the schema beside the input. valibot's strictObject
// stops at the first unknown key of an object; an operator needs all of them at once.

import * as v from 'valibot';
import { type ConfigIssue, type KeyPath, formatKeyPath } from './config-error.js';
import { describeValue } from './messages.js';

/** The parts of a valibot schema the walk reads (valibot's own types hide them behind generics). */
interface SchemaNode {
  type: string;
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
}

const OPTIONAL_TYPES = new Set(['optional', 'nullish', 'exact_optional']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the schema says when the key is absent, e.g. `expected a directory path, got nothing`. */
function missingKeyMessage(entry: SchemaNode): string {
  const result = v.safeParse(entry as unknown as v.GenericSchema, undefined);
  return result.success ? 'required key is missing' : result.issues[0].message;
}

function walk(node: SchemaNode, value: unknown, path: KeyPath, issues: ConfigIssue[]): void {
  if (OPTIONAL_TYPES.has(node.type) && node.wrapped !== undefined) {
    if (value !== undefined) walk(node.wrapped, value, path, issues);
    return;
  }
  if (node.type === 'strict_object' && node.entries !== undefined) {
    if (Array.isArray(value)) {
      // strictObject takes a list for an object with keys "0", "1"...; say what it really is.
      const what = path.length === 0 ? 'an object of configuration keys' : 'an object';
      issues.push({ path: formatKeyPath(path), message: `expected ${what}, got ${describeValue(value)}` });
      return;
    }
    if (!isPlainObject(value)) return;
    const where = path.length === 0 ? 'the top level' : formatKeyPath(path);
    const allowed = Object.keys(node.entries).join(', ');
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(node.entries, key)) {
        issues.push({
          path: formatKeyPath([...path, key]),
          message: `unknown key ${JSON.stringify(key)} at ${where} (allowed: ${allowed})`,
        });
      }
    }
    for (const [key, entry] of Object.entries(node.entries)) {
      if (Object.hasOwn(value, key)) walk(entry, value[key], [...path, key], issues);
      else if (!OPTIONAL_TYPES.has(entry.type)) {
        issues.push({ path: formatKeyPath([...path, key]), message: missingKeyMessage(entry) });
      }
    }
    return;
  }
  if (node.type === 'array' && node.item !== undefined && Array.isArray(value)) {
    const item = node.item;
    value.forEach((element, index) => walk(item, element, [...path, index], issues));
  }
}

/** Every unknown key, list-for-object and missing required key in `input`, with its key path. */
export function checkKeys(schema: v.GenericSchema, input: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  walk(schema as unknown as SchemaNode, input, [], issues);
  return issues;
}
