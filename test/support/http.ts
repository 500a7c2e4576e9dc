// A real HTTP client for tests (undici), answering status, headers and the whole body; in the HTTP/2
// pass (test-protocol.ts) it speaks HTTP/2 to a node's TLS data plane.
import { request } from 'undici';
import { get, type IncomingHttpHeaders } from 'node:http';
import { h2Fetch, speaksH2 } from './test-protocol.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  raw: Buffer;
}

/** Request fields by name, or a flat raw list `[name, value, …]` that may repeat a name on several lines. */
export type RequestFields = Record<string, string> | string[];

export async function fetchRaw(
  url: string,
  options: { method?: string; headers?: RequestFields; body?: string | Buffer } = {},
): Promise<Answer> {
  if (speaksH2(url)) {
    const answer = await h2Fetch(url, { method: options.method, fields: fieldsByName(options.headers), body: options.body });
    return { status: answer.status, headers: answer.headers, body: answer.raw.toString('utf8'), raw: answer.raw };
  }
  const response = await request(url, {
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
  });
  const raw = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, body: raw.toString('utf8'), raw };
}

/** Request fields by lower-case name, a repeated name's values as a list (HTTP/2 sends each as a field line). */
function fieldsByName(fields: RequestFields | undefined): Record<string, string | string[]> | undefined {
  if (fields === undefined || !Array.isArray(fields)) return fields;
  const byName: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toLowerCase();
    const existing = byName[name];
    byName[name] = existing === undefined ? fields[i + 1]! : [...(Array.isArray(existing) ? existing : [existing]), fields[i + 1]!];
  }
  return byName;
}

export function header(answer: Answer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A GET through node:http, which sends header fields exactly as given (undici normalises some). */
export function rawHttpGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    }).on('error', reject);
  });
}
