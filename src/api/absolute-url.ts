// The URL rule of spec §1 and §2.1, shared by the admin server, the client, the CLI and the
// dashboard: an absolute URL that begins with `http://` or `https://` and names a host.
import * as v from 'valibot';
import { parseAbsoluteUrl } from '../http/request-target.js';

export const ABSOLUTE_URL_EXPECTATION = 'an absolute http:// or https:// URL with a host';

/**
 * True when the URL parses as the data plane parses an absolute-form target (src/edge/), so that
 * whatever the admin API accepts names a key a client request could have been stored under.
 */
export function isAbsoluteHttpUrl(value: string): boolean {
  return parseAbsoluteUrl(value) !== undefined;
}

export const absoluteUrlSchema = v.pipe(
  v.string(`expected ${ABSOLUTE_URL_EXPECTATION}`),
  v.check(isAbsoluteHttpUrl, (issue) => `expected ${ABSOLUTE_URL_EXPECTATION}, got ${JSON.stringify(issue.input)}`),
);
