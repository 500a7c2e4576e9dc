// An svc node whose CDN block points at a fake CDN, with the CDN's timers under the test's control,
// and the calls the CDN tests make to its admin API.
import { startSvc, type SvcOptions, type SvcUnderTest } from '../../support/svc-harness.js';
import { adminCall, type JsonAnswer } from '../../api/support/admin-fetch.js';
import type { CdnStatusResponse } from '../../../src/api/responses.js';
import { CdnTestTimers } from './cdn-timers.js';
import type { FakeCdn } from './fake-cdn.js';

export const CDN_TOKEN = 'cdn-token-Hx93kQ7wPz2vL5nR8tY4';
export const ZONE = '023e105f4ecef8ad9ca31a8372d0c353';
const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface CdnNodeOptions {
  async?: boolean;
  /** `cdn.timeout`. */
  timeout?: string;
  propagate?: Record<string, boolean>;
  /** The token in `cdn.api_token` rather than in CDN_API_TOKEN. */
  tokenInConfig?: boolean;
  /** A warm tier in this directory (restart tests reuse it). */
  warmDir?: string;
  origins?: string[];
  config?: Record<string, unknown>;
  svc?: SvcOptions;
}

export interface CdnNode {
  svc: SvcUnderTest;
  timers: CdnTestTimers;
  admin(method: string, path: string, body?: unknown): Promise<JsonAnswer>;
  status(): Promise<CdnStatusResponse>;
  metrics(): Promise<string>;
  /** Every log line the node wrote, as text. */
  logText(): string;
  stop(): Promise<void>;
}

export async function startCdnNode(cdn: FakeCdn, options: CdnNodeOptions = {}): Promise<CdnNode> {
  const timers = new CdnTestTimers();
  const svc = await startSvc(options.origins ?? ['http://127.0.0.1:9'], {
    ...options.svc,
    config: {
      ...(options.warmDir ? { warm: { path: options.warmDir, max_bytes: 10_000_000 } } : {}),
      cdn: {
        zone_id: ZONE,
        api_base_url: `${cdn.url}/client/v4`,
        async: options.async ?? true,
        ...(options.timeout ? { timeout: options.timeout } : {}),
        ...(options.propagate ? { propagate: options.propagate } : {}),
        ...(options.tokenInConfig ? { api_token: CDN_TOKEN } : {}),
      },
      ...options.config,
    },
    env: options.tokenInConfig ? {} : { CDN_API_TOKEN: CDN_TOKEN },
    cdnTiming: { setTimer: timers.setTimer, random: timers.random },
  });
  const admin = (method: string, path: string, body?: unknown): Promise<JsonAnswer> =>
    adminCall(svc.adminUrl, method, path, { token: ADMIN_TOKEN, ...(body === undefined ? {} : { body }) });
  return {
    svc,
    timers,
    admin,
    async status() {
      const answer = await admin('GET', '/v1/cdn/status');
      if (answer.status !== 200) throw new Error(`GET /v1/cdn/status answered ${answer.status}: ${answer.body}`);
      return answer.json as CdnStatusResponse;
    },
    async metrics() {
      return (await adminCall(svc.adminUrl, 'GET', '/metrics')).body;
    },
    logText: () => svc.logs.text.join('\n'),
    stop: () => svc.stop(),
  };
}

/** The value of one sample of a Prometheus exposition; throws when the series is absent. */
export function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no series ${series} in the metrics`);
  return Number(line.slice(series.length + 1));
}
