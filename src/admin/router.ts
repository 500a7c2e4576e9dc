// The admin server's routing: exact paths and path prefixes (for `/debug/pprof/*` and the dashboard),
// each with handlers per method. A known path with another method answers 405 with `Allow`; an unknown
// path answers 404; both in the API's JSON error shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';

export interface AdminRequest {
  raw: IncomingMessage;
  method: string;
  path: string;
  query: URLSearchParams;
}

export type AdminHandler = (request: AdminRequest, response: ServerResponse) => Promise<void> | void;

interface PathEntry {
  handlers: Map<string, AdminHandler>;
}

export class AdminRouter {
  private readonly exact = new Map<string, PathEntry>();
  private readonly prefixes: { prefix: string; entry: PathEntry }[] = [];

  /** Registers a handler; a path ending in `*` matches every path starting with what precedes it. */
  on(method: string, path: string, handler: AdminHandler): this {
    let entry: PathEntry | undefined;
    if (path.endsWith('*')) {
      const prefix = path.slice(0, -1);
      entry = this.prefixes.find((p) => p.prefix === prefix)?.entry;
      if (!entry) {
        entry = { handlers: new Map() };
        this.prefixes.push({ prefix, entry });
        this.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
      }
    } else {
      entry = this.exact.get(path);
      if (!entry) this.exact.set(path, (entry = { handlers: new Map() }));
    }
    if (entry.handlers.has(method)) throw new Error(`admin route ${method} ${path} registered twice`);
    entry.handlers.set(method, handler);
    return this;
  }

  /** Every registered `METHOD path`, for the OpenAPI coverage test and the docs. */
  routes(): string[] {
    const list: string[] = [];
    for (const [path, entry] of this.exact) for (const method of entry.handlers.keys()) list.push(`${method} ${path}`);
    for (const { prefix, entry } of this.prefixes) for (const method of entry.handlers.keys()) list.push(`${method} ${prefix}*`);
    return list.sort();
  }

  resolve(method: string, path: string): AdminHandler {
    const entry = this.exact.get(path) ?? this.prefixes.find((p) => path.startsWith(p.prefix))?.entry;
    if (!entry) throw new ApiError(404, 'not_found', `no admin endpoint at ${path}`);
    const handler = entry.handlers.get(method) ?? (method === 'HEAD' ? entry.handlers.get('GET') : undefined);
    if (!handler) {
      const allow = [...entry.handlers.keys()].join(', ');
      throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${path}; use ${allow}`, { Allow: allow });
    }
    return handler;
  }
}
