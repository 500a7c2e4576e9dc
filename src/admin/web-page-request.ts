// Whether a request was made by a web page, as browsers say it themselves: `Origin` (on every
// cross-origin fetch and every POST) and Fetch Metadata's `Sec-Fetch-Site` (on every request of a
// current browser; `none` when the person typed the address or opened a bookmark). An endpoint that
// changes the node's state without a token refuses such requests, or any page open on the operator's
// machine could make them (an <img> tag is enough). `same-origin` is refused too: a page whose name
// was rebound to 127.0.0.1 (DNS rebinding) is same-origin to the browser, and no page of svc's own
// makes these requests. curl, load balancers and orchestrators send neither field.
import type { IncomingHttpHeaders } from 'node:http';

/** The values Fetch Metadata defines, named in the answer as sent; any other is only called "not none". */
const FETCH_SITES = new Set(['cross-site', 'same-site', 'same-origin']);

/** Why the request is taken for a web page's, or undefined when nothing says it is. */
export function madeByWebPage(headers: IncomingHttpHeaders): string | undefined {
  if (headers.origin !== undefined) return 'it carries an Origin header';
  const site = headers['sec-fetch-site'];
  if (site === undefined || site === 'none') return undefined;
  return FETCH_SITES.has(site) ? `its Sec-Fetch-Site is ${site}` : 'its Sec-Fetch-Site is not none';
}
