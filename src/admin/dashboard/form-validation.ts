// The checks the dashboard's forms run before they submit (spec §1, §7): URLs begin with http:// or
// https:// and name a host; regex fields are valid RE2, judged by the very RE2 engine and ban compiler
// the server uses; a ban fills at least one field. The browser asks `POST /dashboard/api/validate`,
// so the form and the server can never disagree about what is valid.
import * as v from 'valibot';
import { isAbsoluteHttpUrl } from '../../api/absolute-url.js';
import { PURGE_BATCH_MAX_URLS } from '../../api/limits.js';
import { compileBan, normaliseBanSpec } from '../../invalidation/ban.js';
import { InvalidBanError } from '../../invalidation/errors.js';

const text = v.string('expected a string');

/** What the form holds, by operation (`inspect` is the URL inspector's form). */
export const formValidationRequestSchema = v.variant(
  'operation',
  [
    v.strictObject({ operation: v.picklist(['purge', 'refresh', 'inspect']), url: text }),
    v.strictObject({ operation: v.literal('purge_batch'), urls: v.array(text, 'expected an array of strings') }),
    v.strictObject({
      operation: v.literal('ban'),
      host_regex: v.optional(text),
      path_regex: v.optional(text),
      surrogate_key: v.optional(text),
    }),
  ],
  'operation: expected "purge", "refresh", "inspect", "purge_batch" or "ban"',
);
export type FormValidationRequest = v.InferOutput<typeof formValidationRequestSchema>;

export interface FieldProblem {
  /** The form field (`url`, `urls`, `urls[3]`, `host_regex`…), or `form` for the form as a whole. */
  field: string;
  message: string;
}

export interface FormValidationResponse {
  valid: boolean;
  problems: FieldProblem[];
}

/** Why a URL field is refused, in the words the form shows; undefined when it is good. */
export function urlProblem(url: string): string | undefined {
  // Not trimmed: the API takes the URL as sent, so the form sends it trimmed and asks about that.
  if (url.trim() === '') return 'Enter a URL.';
  if (!/^https?:\/\//i.test(url)) return 'The URL must begin with http:// or https://.';
  if (!isAbsoluteHttpUrl(url)) return 'The URL must include a host after http:// or https://, e.g. https://shop.example/page.';
  return undefined;
}

function regexProblem(field: 'host_regex' | 'path_regex', pattern: string): string | undefined {
  try {
    compileBan('form-check', 0, { [field]: pattern });
    return undefined;
  } catch (error) {
    if (error instanceof InvalidBanError) return error.message;
    throw error;
  }
}

export function validateForm(form: FormValidationRequest): FormValidationResponse {
  const problems: FieldProblem[] = [];
  switch (form.operation) {
    case 'purge':
    case 'refresh':
    case 'inspect': {
      const problem = urlProblem(form.url);
      if (problem !== undefined) problems.push({ field: 'url', message: problem });
      break;
    }
    case 'purge_batch': {
      if (form.urls.length === 0) problems.push({ field: 'urls', message: 'Enter at least one URL, one per line.' });
      if (form.urls.length > PURGE_BATCH_MAX_URLS) {
        problems.push({ field: 'urls', message: `A batch holds at most ${PURGE_BATCH_MAX_URLS} URLs; this one has ${form.urls.length}.` });
      }
      form.urls.forEach((url, index) => {
        const problem = urlProblem(url);
        if (problem !== undefined) problems.push({ field: `urls[${index}]`, message: `Line ${index + 1}: ${problem}` });
      });
      break;
    }
    case 'ban': {
      const spec = normaliseBanSpec(form);
      if (spec.host_regex === undefined && spec.path_regex === undefined && spec.surrogate_key === undefined) {
        problems.push({ field: 'form', message: 'Fill in at least one field: host regex, path regex or surrogate key.' });
      }
      for (const field of ['host_regex', 'path_regex'] as const) {
        const pattern = spec[field];
        const problem = pattern === undefined ? undefined : regexProblem(field, pattern);
        if (problem !== undefined) problems.push({ field, message: problem });
      }
      break;
    }
  }
  return { valid: problems.length === 0, problems };
}
