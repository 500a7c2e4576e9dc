// The typed client of the admin API (spec §9): one method per endpoint, request and response bodies
// checked against the shared schemas of src/api, every failure an AdminApiError.
import { request } from 'undici';
import * as v from 'valibot';
import type { BanRequest } from '../api/requests.js';
import {
  authCheckResponseSchema,
  banResponseSchema,
  bansResponseSchema,
  cacheCheckResponseSchema,
  cdnStatusResponseSchema,
  configResponseSchema,
  errorResponseSchema,
  healthResponseSchema,
  peersResponseSchema,
  purgeBatchResponseSchema,
  purgeResponseSchema,
  readyResponseSchema,
  recentInvalidationsResponseSchema,
  refreshResponseSchema,
  reloadResponseSchema,
  statsResponseSchema,
  undrainResponseSchema,
  versionResponseSchema,
} from '../api/responses.js';
import { AdminApiError } from './admin-api-error.js';
import { adminBaseUrl, DEFAULT_ADMIN_SERVER } from './server-address.js';

export interface AdminClientOptions {
  /** `host:port` or an http(s) URL; default 127.0.0.1:9000 (spec §4.2). */
  server?: string | URL;
  /** The admin bearer token; needed by every `/v1/` endpoint except the cluster peer list. */
  token?: string | undefined;
  /** Whole-call bound, connection to last body byte. 30 s: a batch purge of 1000 URLs fits easily. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

interface Call<TSchema extends v.GenericSchema> {
  method: 'GET' | 'POST';
  path: string;
  schema: TSchema;
  body?: unknown;
  authenticated: boolean;
  /** Statuses other than 200 whose body is still a normal answer (503 on /readyz). */
  alsoOk?: readonly number[];
}

function reachFailure(error: unknown, baseUrl: string, timeoutMs: number): AdminApiError {
  const failure = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (failure.name === 'TimeoutError' || failure.name === 'AbortError' || failure.code?.includes('TIMEOUT')) {
    return new AdminApiError(0, 'timeout', `no answer from the admin API at ${baseUrl} within ${timeoutMs} ms`);
  }
  const code = failure.code ?? failure.cause?.code;
  const why = code === 'ECONNREFUSED' ? 'connection refused (is svc running, and is this its admin address?)' : (failure.message ?? String(error));
  return new AdminApiError(0, 'unreachable', `cannot reach the admin API at ${baseUrl}: ${why}`);
}

export interface AdminClient {
  readonly baseUrl: string;
  purge(url: string): Promise<v.InferOutput<typeof purgeResponseSchema>>;
  purgeBatch(urls: readonly string[]): Promise<v.InferOutput<typeof purgeBatchResponseSchema>>;
  ban(spec: BanRequest): Promise<v.InferOutput<typeof banResponseSchema>>;
  refresh(url: string): Promise<v.InferOutput<typeof refreshResponseSchema>>;
  authCheck(): Promise<v.InferOutput<typeof authCheckResponseSchema>>;
  stats(): Promise<v.InferOutput<typeof statsResponseSchema>>;
  config(): Promise<v.InferOutput<typeof configResponseSchema>>;
  cacheCheck(url: string): Promise<v.InferOutput<typeof cacheCheckResponseSchema>>;
  recentInvalidations(): Promise<v.InferOutput<typeof recentInvalidationsResponseSchema>>;
  /** Only on a node with the CDN configured (404 `not_found` otherwise). */
  cdnStatus(): Promise<v.InferOutput<typeof cdnStatusResponseSchema>>;
  /** The active bans, newest first, with their age and what they matched. */
  bans(): Promise<v.InferOutput<typeof bansResponseSchema>>;
  /** Re-reads the node's configuration file; a refusal is an AdminApiError (409 or 422) saying why. */
  reload(): Promise<v.InferOutput<typeof reloadResponseSchema>>;
  /** Puts a drained node back in service; answers the same on a node that serves. */
  undrain(): Promise<v.InferOutput<typeof undrainResponseSchema>>;
  health(): Promise<v.InferOutput<typeof healthResponseSchema>>;
  /** Also answers (rather than throws) while the node drains, when `/readyz` is 503. */
  ready(detail?: boolean): Promise<v.InferOutput<typeof readyResponseSchema>>;
  version(): Promise<v.InferOutput<typeof versionResponseSchema>>;
  peers(): Promise<v.InferOutput<typeof peersResponseSchema>>;
}

export function createAdminClient(options: AdminClientOptions = {}): AdminClient {
  const baseUrl = adminBaseUrl(options.server ?? DEFAULT_ADMIN_SERVER);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function call<TSchema extends v.GenericSchema>(spec: Call<TSchema>): Promise<v.InferOutput<TSchema>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (spec.authenticated && options.token !== undefined && options.token !== '') headers.authorization = `Bearer ${options.token}`;
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    let status: number;
    let text: string;
    try {
      const response = await request(`${baseUrl}${spec.path}`, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw reachFailure(error, baseUrl, timeoutMs);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (status !== 200 && !spec.alsoOk?.includes(status)) {
      const error = v.safeParse(errorResponseSchema, parsed);
      if (error.success) throw new AdminApiError(status, error.output.error.code, error.output.error.message);
      throw new AdminApiError(status, 'http_error', `${spec.method} ${spec.path} answered without the API's error body`);
    }
    const result = v.safeParse(spec.schema, parsed);
    if (!result.success) {
      throw new AdminApiError(status, 'invalid_response', `${spec.method} ${spec.path} answered a body the API does not document`);
    }
    return result.output;
  }

  return {
    baseUrl,
    purge: (url) => call({ method: 'POST', path: '/v1/purge', body: { url }, schema: purgeResponseSchema, authenticated: true }),
    purgeBatch: (urls) =>
      call({ method: 'POST', path: '/v1/purge/batch', body: { urls }, schema: purgeBatchResponseSchema, authenticated: true }),
    ban: (spec) => call({ method: 'POST', path: '/v1/ban', body: spec, schema: banResponseSchema, authenticated: true }),
    refresh: (url) => call({ method: 'POST', path: '/v1/refresh', body: { url }, schema: refreshResponseSchema, authenticated: true }),
    authCheck: () => call({ method: 'GET', path: '/v1/auth/check', schema: authCheckResponseSchema, authenticated: true }),
    stats: () => call({ method: 'GET', path: '/v1/stats', schema: statsResponseSchema, authenticated: true }),
    config: () => call({ method: 'GET', path: '/v1/config', schema: configResponseSchema, authenticated: true }),
    cacheCheck: (url) =>
      call({
        method: 'GET',
        path: `/v1/debug/cachecheck?url=${encodeURIComponent(url)}`,
        schema: cacheCheckResponseSchema,
        authenticated: true,
      }),
    recentInvalidations: () =>
      call({ method: 'GET', path: '/v1/invalidations/recent', schema: recentInvalidationsResponseSchema, authenticated: true }),
    cdnStatus: () => call({ method: 'GET', path: '/v1/cdn/status', schema: cdnStatusResponseSchema, authenticated: true }),
    bans: () => call({ method: 'GET', path: '/v1/bans', schema: bansResponseSchema, authenticated: true }),
    reload: () => call({ method: 'POST', path: '/v1/reload', schema: reloadResponseSchema, authenticated: true }),
    undrain: () => call({ method: 'POST', path: '/v1/undrain', schema: undrainResponseSchema, authenticated: true }),
    health: () => call({ method: 'GET', path: '/healthz', schema: healthResponseSchema, authenticated: false }),
    ready: (detail = false) =>
      call({ method: 'GET', path: detail ? '/readyz?detail=1' : '/readyz', schema: readyResponseSchema, authenticated: false, alsoOk: [503] }),
    version: () => call({ method: 'GET', path: '/version', schema: versionResponseSchema, authenticated: false }),
    peers: () => call({ method: 'GET', path: '/v1/cluster/peers', schema: peersResponseSchema, authenticated: false }),
  };
}
