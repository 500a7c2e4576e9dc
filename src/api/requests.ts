// Request bodies of the admin API (spec §2.1). Unknown fields are rejected, so a misspelt ban field
// is an error instead of a broader ban than intended.
import * as v from 'valibot';
import { absoluteUrlSchema } from './absolute-url.js';

function object<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  // One message function covers the object's own issues: an unknown key, a missing key, not an object.
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return `unknown field ${issue.received}`;
    if (issue.expected?.startsWith('"')) return `required field ${issue.expected} is missing`;
    return `expected a JSON object, got ${issue.received}`;
  });
}

function text(what: string) {
  return v.string(`expected ${what}`);
}

export const purgeRequestSchema = object({ url: absoluteUrlSchema });
export type PurgeRequest = v.InferOutput<typeof purgeRequestSchema>;

/**
 * Entries are any strings: one that is not an absolute http(s) URL counts in `failed` and the rest
 * are purged. The count bound (PURGE_BATCH_MAX_URLS) is checked by the server as 413, not here.
 */
export const purgeBatchRequestSchema = object({ urls: v.array(text('a string'), 'expected an array of URL strings') });
export type PurgeBatchRequest = v.InferOutput<typeof purgeBatchRequestSchema>;

/** Every field optional here; at least one non-empty field is the Invalidator's rule (`empty_ban`). */
export const banRequestSchema = object({
  host_regex: v.optional(text('an RE2 regular expression string')),
  path_regex: v.optional(text('an RE2 regular expression string')),
  surrogate_key: v.optional(text('a surrogate key string')),
});
export type BanRequest = v.InferOutput<typeof banRequestSchema>;

export const BAN_FIELDS = ['host_regex', 'path_regex', 'surrogate_key'] as const satisfies readonly (keyof BanRequest)[];

export const refreshRequestSchema = object({ url: absoluteUrlSchema });
export type RefreshRequest = v.InferOutput<typeof refreshRequestSchema>;
