// The admin API's invalidations, forwarded to the CDN after they were applied (and, in a cluster,
// handed to cluster delivery). Only the node whose admin API received an invalidation sends it to
// the CDN: invalidations arriving from peers go to the local engine, never through here, so each
// reaches the CDN once however many nodes there are. The local invalidation is never undone: a CDN
// failure can only change what the admin request answers (sync mode), never what was applied.
import type { BanSpec, BatchResult, Invalidator, InvalidationResult, UrlInvalidationResult } from '../invalidation/invalidator.js';
import { keyOfUrl } from '../invalidation/url-key.js';
import type { CdnInvalidation } from './purge-mapping.js';

export interface CdnForwarder {
  forward(invalidation: CdnInvalidation): Promise<void>;
}

export class CdnInvalidator implements Invalidator {
  constructor(
    private readonly inner: Invalidator,
    private readonly cdn: CdnForwarder,
  ) {}

  async purge(url: string): Promise<UrlInvalidationResult> {
    const result = await this.inner.purge(url);
    await this.cdn.forward({ type: 'purge', urls: [url] });
    return result;
  }

  async purgeBatch(urls: readonly string[]): Promise<BatchResult> {
    const result = await this.inner.purgeBatch(urls);
    // The entries counted as `failed` were not purged here, and are no URL the CDN could purge.
    await this.cdn.forward({ type: 'purge', urls: urls.filter((url) => keyOfUrl(url) !== undefined) });
    return result;
  }

  async ban(spec: BanSpec): Promise<InvalidationResult> {
    const result = await this.inner.ban(spec);
    await this.cdn.forward({ type: 'ban', spec });
    return result;
  }

  async refresh(url: string): Promise<UrlInvalidationResult> {
    const result = await this.inner.refresh(url);
    await this.cdn.forward({ type: 'refresh', url });
    return result;
  }

  isInvalidated: Invalidator['isInvalidated'] = (entry) => this.inner.isInvalidated(entry);
  activeBans: Invalidator['activeBans'] = () => this.inner.activeBans();
  matchingBans: Invalidator['matchingBans'] = (entry) => this.inner.matchingBans(entry);
  recent: Invalidator['recent'] = () => this.inner.recent();
  counts: Invalidator['counts'] = () => this.inner.counts();
}
