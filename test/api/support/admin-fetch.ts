// Calls to a node's admin API for the API tests: JSON in, status, headers and parsed JSON out.
import { fetchRaw, type Answer } from '../../support/http.js';

export interface JsonAnswer extends Answer {
  json: unknown;
}

export interface ErrorBody {
  error: { code: string; message: string };
}

export async function adminCall(
  adminUrl: string,
  method: string,
  path: string,
  options: { token?: string | undefined; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const answer = await fetchRaw(`${adminUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  return { ...answer, json };
}

export function errorCode(answer: JsonAnswer): string | undefined {
  return (answer.json as ErrorBody | undefined)?.error?.code;
}

export function errorMessage(answer: JsonAnswer): string {
  return (answer.json as ErrorBody | undefined)?.error?.message ?? '';
}
