// Writing JSON answers from the admin server.
import type { ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(text);
}

export function sendError(response: ServerResponse, error: ApiError): void {
  sendJson(response, error.status, error.body(), error.headers);
}

/** Turns anything thrown by a handler into an API error; unexpected ones become 500 without detail. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(500, 'internal', 'the admin server failed to handle the request');
}
