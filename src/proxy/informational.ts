// Informational (1xx) answers from the origin, passed on to the client whose request caused them
// (RFC 9110 §15.2: a proxy MUST forward 1xx responses, and a server MUST NOT send one to an HTTP/1.0
// client). 103 Early Hints is the one that matters: its Link fields let a browser start fetching
// styles and scripts while the origin is still building the page.
//
// Node writes a 1xx ahead of the final head only through writeEarlyHints (103) and writeProcessing
// (102), which queue it behind an earlier pipelined response on the same connection; svc does not write
// raw bytes to the socket, which would not. So svc forwards 103 and 102, and no other 1xx: 100 never
// reaches it (undici fails an unsolicited 100, and svc's own Node server answers a client's
// `Expect: 100-continue` itself), 101 is an upgrade svc does not proxy, and no other 1xx is in use.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { isHttp1, responseGone, type OutgoingResponse } from '../http/server-messages.js';
import { responseFieldsFromOrigin } from '../fill/forward-headers.js';
import type { Exchange } from './exchange.js';

/** A 1xx answer as undici reports it. */
export interface Informational {
  statusCode: number;
  headers: Record<string, string | string[]>;
}

/**
 * Splits a Link field value into its link-values: at commas outside `<…>` and quoted strings, since a
 * URI or a parameter may contain commas. Node checks each link-value on its own.
 */
function linkValues(value: string): string[] {
  const values: string[] = [];
  let start = 0;
  let inUri = false;
  let inQuotes = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (inQuotes) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inQuotes = false;
    } else if (c === 0x22) inQuotes = true;
    else if (c === 0x3c) inUri = true;
    else if (c === 0x3e) inUri = false;
    else if (c === 0x2c && !inUri) {
      values.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  values.push(value.slice(start).trim());
  return values.filter((link) => link.length > 0);
}

/**
 * The hints object writeEarlyHints takes: every field of the 103 but the hop-by-hop ones, each valid
 * name and value once (repeated lines joined with ", "), Link as its list of link-values.
 */
function earlyHints(headers: Informational['headers']): Record<string, string | string[]> {
  const fields = responseFieldsFromOrigin(headers);
  const hints: Record<string, string | string[]> = {};
  const links: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    try {
      // writeEarlyHints writes fields other than Link as given; only valid ones may reach the socket.
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      continue;
    }
    if (name === 'link') links.push(...linkValues(value));
    else hints[name] = hints[name] === undefined ? value : `${hints[name] as string}, ${value}`;
  }
  if (links.length > 0) hints.link = links;
  return hints;
}

function writeEarlyHints(response: OutgoingResponse, headers: Informational['headers']): void {
  const hints = earlyHints(headers);
  // A 103 without Link hints at nothing Node can write; one whose Link Node rejects is dropped too.
  if (hints.link === undefined) return;
  try {
    response.writeEarlyHints(hints);
  } catch {
    // Node checks each link-value against RFC 8288's syntax: an origin's odd Link is not forwarded.
  }
}

/**
 * The function that passes the origin's 1xx answers on to this exchange's client, or undefined when
 * the client speaks HTTP/1.0, which never gets one. Nothing is written once the final head went out.
 */
export function relayInformational(exchange: Exchange): ((info: Informational) => void) | undefined {
  const { request, response } = exchange;
  if (request.httpVersionMajor === 1 && request.httpVersionMinor === 0) return undefined;
  return (info) => {
    if (response.headersSent || response.writableEnded || responseGone(response)) return;
    if (info.statusCode === 103) writeEarlyHints(response, info.headers);
    // HTTP/2 has no 102 to write (Node's compatibility response has no writeProcessing; RFC 9110
    // leaves 102 out, it only tells a client to wait).
    else if (info.statusCode === 102 && isHttp1(response)) response.writeProcessing();
  };
}
