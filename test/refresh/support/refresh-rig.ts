// The refresher wired as the node wires it, from real parts: a real hot store (and, when asked, a real
// warm store in a temporary directory) behind a TieredCache, a real origin the test answers through a
// real upstream pool, a prom-client registry, and a clock and timers the test moves by hand.
import { createNodeLimitsMemory, nodeLimits } from '../../../src/node/node-limits.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import type { CacheEntry } from '../../../src/cache/entry.js';
import { TieredCache, variantWithKey } from '../../../src/store/tiered-cache.js';
import { headersFromRaw } from '../../../src/cache/policy/header-lookup.js';
import { keyOfUrl } from '../../../src/invalidation/url-key.js';
import type { OriginRequest } from '../../../src/fill/origin-fetch.js';
import { createLogger } from '../../../src/observe/logger.js';
import { buildEntry } from '../../../src/fill/build-entry.js';
import { createHotStore } from '../../../src/store/hot-store.js';
import { FillLayer } from '../../../src/fill/fill-layer.js';
import { openWarmStore, type WarmStore } from '../../../src/store/warm/warm-store.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import {
  BackgroundRefresher,
  type BackgroundRefresherOptions,
  type RefreshRoute,
} from '../../../src/refresh/background-refresher.js';
import { startTestOrigin, type OriginReply, type TestOrigin } from '../../support/test-origin.js';
import { ManualTime } from './manual-time.js';
import { registryValue, type Labels } from './metric-values.js';

export const HOST = 'shop.example';

/** The key an http request for `path` on `host` is stored under. */
export function httpKey(host: string, path: string): string {
  return keyOfUrl(`http://${host}${path}`)!;
}

/** A client's request as the data plane hands it to the refresher. */
export function clientRequest(path: string, host: string, fields: string[] = []): OriginRequest {
  return {
    path,
    rawHeaders: ['Host', host, ...fields],
    forwarding: { scheme: 'http', host, peerAddress: '127.0.0.1', forwardedFor: undefined, forwarded: undefined, strip: new Set() },
    clientAddress: '127.0.0.1',
  };
}
export const ROUTE = 'assets';

export class LogLines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

/** What the test origin holds per path: its current body and ETag, and how it answers. */
export interface OriginObject {
  body: string;
  etag: string;
  cacheControl?: string;
  status?: number;
  vary?: string;
  /** Answer every request this way instead (errors, hangs, delays). */
  reply?: OriginReply;
}

export interface Rig {
  time: ManualTime;
  origin: TestOrigin;
  objects: Map<string, OriginObject>;
  cache: TieredCache;
  /** The fill layer the refresher opens its fills in. */
  fills: FillLayer;
  registry: Registry;
  logs: LogLines;
  route: RefreshRoute;
  refresher: BackgroundRefresher;
  /** The warm directory when the rig has a warm tier. */
  dir: string;
  /** Stores what the origin answers for `path` now, as the proxy would on a miss; returns the entry. */
  fill(path: string, requestFields?: string[]): CacheEntry;
  /** A client request that found `entry` stored (the proxy's hook). */
  serve(entry: CacheEntry, requestFields?: string[]): void;
  /** The stored variant of `path`, if any. */
  stored(path: string, variantKey?: string): CacheEntry | undefined;
  /** Origin requests for `path` that carried a validator. */
  conditionalRequests(path: string): number;
  /** Moves the clock and waits for the refreshes it started. */
  advance(ms: number): Promise<void>;
  value(name: string, labels?: Labels): Promise<number | undefined>;
  skips(reason: string): Promise<number | undefined>;
  /** Stops the refresher, closes stores, pool and origin, removes the directory. */
  close(): Promise<void>;
}

export interface RigOptions {
  refresher?: Partial<BackgroundRefresherOptions>;
  minHits?: number;
  /** Open a warm tier in `dir` (a fresh temporary directory unless given) and persist the registry there. */
  warm?: boolean;
  dir?: string;
  /** Reuse an origin (a restart); it is then not closed with the rig. */
  origin?: TestOrigin;
  objects?: Map<string, OriginObject>;
  time?: ManualTime;
}

export function answerFrom(objects: Map<string, OriginObject>, time: ManualTime, path: string, ifNoneMatch: string | undefined): OriginReply {
  const object = objects.get(path);
  if (object === undefined) return { status: 404, headers: { date: time.httpDate() }, body: 'no such object' };
  if (object.reply) return object.reply;
  const headers: Record<string, string> = { date: time.httpDate(), etag: object.etag, 'cache-control': object.cacheControl ?? 'max-age=100' };
  if (object.vary !== undefined) headers.vary = object.vary;
  if (ifNoneMatch === object.etag) return { status: 304, headers };
  return { status: object.status ?? 200, headers: { ...headers, 'content-type': 'text/plain' }, body: object.body };
}

/** A test origin answering from `objects`, with Date headers from `time`. */
export function startObjectOrigin(objects: Map<string, OriginObject>, time: ManualTime): Promise<TestOrigin> {
  return startTestOrigin((request) => {
    const ifNoneMatch = request.headers['if-none-match'];
    return answerFrom(objects, time, request.url ?? '/', typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined);
  });
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const time = options.time ?? new ManualTime();
  const objects = options.objects ?? new Map<string, OriginObject>();
  const origin = options.origin ?? (await startObjectOrigin(objects, time));
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'svc-refresh-')));
  let warm: WarmStore | undefined;
  if (options.warm) warm = await openWarmStore({ path: join(dir, 'warm'), maxBytes: 4_000_000, writeQueueLength: 256, now: time.now });
  const hot = createHotStore({ maxBytes: 1_000_000, onEvict: (entry) => cache.demote(entry) });
  const cache = new TieredCache(hot, warm);
  const pool = new UpstreamPool({
    name: 'origin',
    upstreams: [origin.url],
    connectTimeoutMs: 1_000,
    responseTimeoutMs: 2_000,
    connections: 16,
    uploadConnections: 4,
    queueTimeoutMs: 2_000,
    connectionCounts: nodeLimits(createNodeLimitsMemory(0), 0).connections,
  });
  const route: RefreshRoute = { label: ROUTE, pool, policy: {}, minHits: options.minHits ?? 2 };
  const registry = new Registry();
  const logs = new LogLines();
  const fills = new FillLayer({ cache, now: time.now, maxObjectBytes: 100_000, writeIdleTimeoutMs: 60_000 });
  const refresher = new BackgroundRefresher({
    cache,
    routes: [route],
    registry,
    logger: createLogger({ destination: logs }),
    fills,
    now: time.now,
    setTimer: time.setTimer,
    ...(options.warm ? { persistDirectory: join(dir, 'refresh') } : {}),
    ...options.refresher,
  });
  await refresher.start();

  const requestOf = (path: string, fields: string[]): OriginRequest => clientRequest(path, HOST, fields);
  return {
    time,
    origin,
    objects,
    cache,
    fills,
    registry,
    logs,
    route,
    refresher,
    dir,
    fill(path, requestFields = []) {
      const answer = answerFrom(objects, time, path, undefined);
      const fields = Object.entries(answer.headers ?? {}).flatMap(([name, value]) => [name, String(value)]);
      const entry = buildEntry({
        key: httpKey(HOST, path),
        requestHeaders: headersFromRaw(requestFields),
        answer: { statusCode: answer.status ?? 200, fields, requestTimeMs: time.now(), responseTimeMs: time.now() },
        route: ROUTE,
        policy: {},
        omitFields: [],
      }).complete(Buffer.from(answer.body ?? ''));
      cache.store(entry);
      return entry;
    },
    serve(entry, requestFields = []) {
      refresher.onServedFromCache(entry, requestOf(new URL(entry.key).pathname, requestFields), route);
    },
    stored(path, variantKey = '') {
      return cache.lookup(httpKey(HOST, path), variantWithKey, variantKey)?.entry;
    },
    conditionalRequests(path) {
      return origin.requests.filter((request) => request.url === path && request.headers['if-none-match'] !== undefined).length;
    },
    async advance(ms) {
      time.advance(ms);
      await refresher.settled();
    },
    value: (name, labels = {}) => registryValue(registry, name, { route: ROUTE, ...labels }),
    skips: (reason) => registryValue(registry, 'svc_refresh_skips_total', { route: ROUTE, reason }),
    async close() {
      await refresher.stop();
      await pool.close();
      await warm?.flush();
      await warm?.close();
      if (!options.origin) await origin.close();
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
