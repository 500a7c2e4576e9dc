// A real HTTP client for tests (undici), answering status, headers and the whole body.
import { request } from 'undici';
import { get, type IncomingHttpHeaders } from 'node:http';

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
  const response = await request(url, {
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
  });
  const raw = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, body: raw.toString('utf8'), raw };
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
