// The URL rule of spec §1 and §2.1, shared by the admin server, the client, the CLI and the
// dashboard: an absolute URL that begins with `http://` or `https://` and names a host.
import * as v from 'valibot';

export const ABSOLUTE_URL_EXPECTATION = 'an absolute http:// or https:// URL with a host';

export function isAbsoluteHttpUrl(value: string): boolean {
  // The prefix test comes first: the WHATWG parser would also accept `http:example.com` and
  // `http:///example.com`, which do not have the host where the spec asks for it.
  if (!/^https?:\/\/[^/?#\\]/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

export const absoluteUrlSchema = v.pipe(
  v.string(`expected ${ABSOLUTE_URL_EXPECTATION}`),
  v.check(isAbsoluteHttpUrl, (issue) => `expected ${ABSOLUTE_URL_EXPECTATION}, got ${JSON.stringify(issue.input)}`),
);
