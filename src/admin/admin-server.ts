// The admin listener (default 127.0.0.1:9000): routes requests through the AdminRouter and answers
// every failure in the API's JSON error shape.
import { createServer, type Server } from 'node:http';
import type { Logger } from '../observe/logger.js';
import type { AdminRouter } from './router.js';
import { sendError, toApiError } from './json-response.js';

export function createAdminServer(router: AdminRouter, logger: Logger): Server {
  return createServer((raw, response) => {
    const url = new URL(raw.url ?? '/', 'http://admin.invalid');
    const request = { raw, method: raw.method ?? 'GET', path: url.pathname, query: url.searchParams };
    const fail = (error: unknown): void => {
      const apiError = toApiError(error);
      if (apiError.status >= 500) logger.error({ err: error, path: request.path }, 'admin request failed');
      if (!response.headersSent) sendError(response, apiError);
      else response.destroy();
    };
    try {
      const result = router.resolve(request.method, request.path)(request, response);
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  });
}
