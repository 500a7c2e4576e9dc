// The invalidations the soak makes through the admin API while the load runs, one every tick, in a
// cycle of six: a purge of a popular hot URL, a ban by surrogate key (one 32nd of the hot catalogue),
// another purge, a batch purge (10 popular hot URLs and the 10 newest paths), a refresh (soft purge)
// of a popular URL, and a regex ban, by path (the Vary paths ending in one digit) and by host (a
// tenant) in turn. Each is counted by what it was, and any answer other than 200 is kept.
import { request } from 'undici';
import { HOT_GROUPS, TENANTS, tenantHost } from './soak-content.js';
import type { SoakMix } from './soak-mix.js';

export interface AdminFailure {
  atMs: number;
  operation: string;
  detail: string;
}

type Operation = { name: string; path: string; body: unknown };

export class SoakInvalidations {
  /** Operations answered 200, by name. */
  readonly done = new Map<string, number>();
  readonly failures: AdminFailure[] = [];
  #tick = 0;

  constructor(
    private readonly adminUrl: string,
    private readonly token: string,
    private readonly mix: SoakMix,
  ) {}

  /** Makes the next invalidation of the cycle and waits for its answer. */
  async next(): Promise<void> {
    const operation = this.#operation(this.#tick++);
    const atMs = Date.now();
    try {
      const response = await request(`${this.adminUrl}${operation.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(operation.body),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await response.body.text();
      if (response.statusCode === 200) this.done.set(operation.name, (this.done.get(operation.name) ?? 0) + 1);
      else this.failures.push({ atMs, operation: operation.name, detail: `${response.statusCode} ${text}` });
    } catch (error) {
      this.failures.push({ atMs, operation: operation.name, detail: String(error) });
    }
  }

  #operation(tick: number): Operation {
    const cycle = Math.floor(tick / 6);
    switch (tick % 6) {
      case 0:
      case 2:
        return { name: 'purge', path: '/v1/purge', body: { url: this.mix.popularHotUrl() } };
      case 1:
        return { name: 'ban surrogate_key', path: '/v1/ban', body: { surrogate_key: `g${cycle % HOT_GROUPS}` } };
      case 3: {
        const urls = [...Array.from({ length: 10 }, () => this.mix.popularHotUrl()), ...this.mix.recentNewUrls(10)];
        return { name: 'purge batch', path: '/v1/purge/batch', body: { urls } };
      }
      case 4:
        return { name: 'refresh', path: '/v1/refresh', body: { url: this.mix.popularHotUrl() } };
      default:
        return cycle % 2 === 0
          ? { name: 'ban path_regex', path: '/v1/ban', body: { path_regex: `^/vary/[0-9]*${(cycle / 2) % 10}$` } }
          : { name: 'ban host_regex', path: '/v1/ban', body: { host_regex: `^${tenantHost(((cycle - 1) / 2) % TENANTS).replaceAll('.', '\\.')}$` } };
    }
  }
}
