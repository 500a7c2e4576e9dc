// Every configuration problem reads "expected <what>, got <value>". These helpers build the message
// functions valibot calls, so each schema and action says in words what it wanted.

import type * as v from 'valibot';

/** Longest string echoed back in a message; longer ones are cut so one line stays readable. */
const MAX_ECHOED_CHARS = 80;

/** Describes a configuration value as a reader of the file would name it. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (typeof value === 'string') {
    const shown = value.length > MAX_ECHOED_CHARS ? `${value.slice(0, MAX_ECHOED_CHARS - 3)}...` : value;
    return JSON.stringify(shown);
  }
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** Describes a secret without echoing it: error messages end up in logs (spec §5 item 6). */
export function describeSecret(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (value === undefined || value === null) return describeValue(value);
  return Array.isArray(value) ? 'a list' : `a value of type ${typeof value}`;
}

/** A valibot message function: `expected <what>, got <the offending value>`. */
export function expected(what: string): (issue: v.BaseIssue<unknown>) => string {
  return (issue) => `expected ${what}, got ${describeValue(issue.input)}`;
}

/** Like `expected`, for secrets: the offending value is described, never shown. */
export function expectedSecret(what: string): (issue: v.BaseIssue<unknown>) => string {
  return (issue) => `expected ${what}, got ${describeSecret(issue.input)}`;
}
