// Turning a file, a text or an already parsed value into a validated Config, or a ConfigError that
// lists every problem: YAML syntax (with line and column), unknown and missing keys, values, and the
// cross-field rules.

import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { parseDocument } from 'yaml';
import { type ConfigIssue, ConfigError, formatKeyPath } from './config-error.js';
import { checkCrossFieldRules } from './cross-field.js';
import { checkKeys } from './key-check.js';
import { type Config, configSchema } from './schema.js';

/** Orders issues by key path, list indexes numerically, so problems of one block sit together. */
function compareIssues(a: ConfigIssue, b: ConfigIssue): number {
  return a.path.localeCompare(b.path, 'en', { numeric: true });
}

/** valibot's issues on values; key problems come from checkKeys, which reports all of them. */
function valueIssues(issues: readonly v.BaseIssue<unknown>[]): ConfigIssue[] {
  return issues.flatMap((issue) => {
    const last = issue.path?.at(-1);
    if (issue.type === 'strict_object' && last !== undefined && 'origin' in last && last.origin === 'key') return [];
    const keys = (issue.path ?? []).map((item) => item.key as string | number);
    return [{ path: formatKeyPath(keys), message: issue.message }];
  });
}

/** Validates an already parsed value (for example from JSON). `source` names it in the error. */
export function parseConfig(input: unknown, source?: string): Config {
  const result = v.safeParse(configSchema, input);
  const issues = [
    ...(result.success ? [] : valueIssues(result.issues)),
    ...checkKeys(configSchema, input),
    ...checkCrossFieldRules(input),
  ];
  if (issues.length > 0 || !result.success) throw new ConfigError(issues.sort(compareIssues), source);
  return result.output;
}

/** Parses YAML (or JSON, which YAML 1.2 reads too) and validates it. */
export function parseConfigText(text: string, source?: string): Config {
  // prettyErrors (yaml's default) fills in linePos; the message's own position suffix is dropped.
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    const name = source ?? 'configuration';
    throw new ConfigError(
      document.errors.map((error) => {
        const position = error.linePos?.[0];
        const where = position === undefined ? name : `${name} line ${position.line}, column ${position.col}`;
        const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
        return { path: '', message: `${where}: YAML syntax error: ${reason}` };
      }),
      source,
    );
  }
  return parseConfig(document.toJS(), source);
}

/** Reads and validates a configuration file. */
export async function loadConfigFile(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new ConfigError([{ path: '', message: `cannot read configuration file ${path}: ${reason}` }], path);
  }
  return parseConfigText(text, path);
}
