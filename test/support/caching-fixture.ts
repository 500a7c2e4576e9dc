// A real origin and a real svc node for HTTP caching tests, with one origin behaviour per path so the
// tests of a file share one node without seeing each other's traffic. The origin's `Date` follows the
// node's manual clock, so moving time moves both sides as it would in the world.
import type { IncomingMessage } from 'node:http';
import { startTestOrigin, type OriginReply, type RecordedRequest, type TestOrigin } from './test-origin.js';
import { startSvc, type SvcOptions, type SvcUnderTest } from './svc-harness.js';
import { fetchRaw, type Answer, type RequestFields } from './http.js';

/** What the origin answers for one path; `count` is how many requests that path had before this one. */
export type PathReply = OriginReply | ((request: IncomingMessage, count: number) => OriginReply | Promise<OriginReply>);

export interface RequestOptions {
  method?: string;
  headers?: RequestFields;
  body?: string;
}

export interface CachingFixture {
  origin: TestOrigin;
  svc: SvcUnderTest;
  /** Sets what the origin answers for `path` (path and query, as requested). */
  on(path: string, reply: PathReply): void;
  /** Requests `path` through svc. */
  get(path: string, options?: RequestOptions): Promise<Answer>;
  /** Requests the origin received for `path`. */
  originRequests(path: string): RecordedRequest[];
  /** The node's Prometheus exposition text. */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/** The value of one sample in a Prometheus text exposition, 0 when it is absent. */
export function metricValue(text: string, sample: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return 0;
}

export interface FixtureOptions extends SvcOptions {
  /** The pool's `response_timeout` (default 2s): short for tests of an origin that hangs. */
  responseTimeout?: string;
  /** The `cache` block of the one route. */
  routeCache?: Record<string, unknown>;
  /** More pools beside `origin`, and more routes, matched before the one route to it (`/`). */
  extraPools?: Record<string, unknown>[];
  extraRoutes?: Record<string, unknown>[];
}

export async function startCachingFixture(options: FixtureOptions = {}): Promise<CachingFixture> {
  const replies = new Map<string, PathReply>();
  const counts = new Map<string, number>();
  // Set once svc is up; the origin reads its clock for Date.
  const clock: { now?: () => number } = {};
  const origin = await startTestOrigin(async (request) => {
    const path = request.url ?? '/';
    const count = counts.get(path) ?? 0;
    counts.set(path, count + 1);
    const configured = replies.get(path);
    if (configured === undefined) return { status: 404, headers: { 'cache-control': 'no-store' }, body: `no reply set for ${path}` };
    const reply = typeof configured === 'function' ? await configured(request, count) : configured;
    const headers: Record<string, string | string[]> = { ...reply.headers };
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'date') && clock.now) {
      headers.date = new Date(clock.now()).toUTCString();
    }
    return { ...reply, headers };
  });
  const started = await startSvc([origin.url], {
    ...options,
    config: {
      pools: [
        { name: 'origin', upstreams: [origin.url], connect_timeout: '1s', response_timeout: options.responseTimeout ?? '2s' },
        ...(options.extraPools ?? []),
      ],
      routes: [...(options.extraRoutes ?? []), { name: 'main', match: { path_prefix: '/' }, pool: 'origin', cache: options.routeCache ?? {} }],
      ...options.config,
    },
  });
  clock.now = started.clock.now;
  return {
    origin,
    svc: started,
    on(path, reply) {
      replies.set(path, reply);
    },
    get(path, requestOptions = {}) {
      return fetchRaw(`${started.dataUrl}${path}`, requestOptions);
    },
    originRequests(path) {
      return origin.requests.filter((request) => request.url === path);
    },
    async metrics() {
      return (await fetchRaw(`${started.adminUrl}/metrics`)).body;
    },
    async close() {
      await started.stop();
      await origin.close();
    },
  };
}
