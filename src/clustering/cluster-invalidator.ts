// The admin API's invalidations, made cluster-wide: each operation is applied here first (so the
// answer counts this node's entries and a bad ban is refused before anything is sent), then handed to
// delivery, which takes it to the other nodes as the cluster mode says. Invalidations that arrive from
// other nodes are applied to the local engine only, never sent on again.
import type { BanSpec, BatchResult, Invalidator, InvalidationResult, UrlInvalidationResult } from '../invalidation/invalidator.js';
import type { InvalidationDelivery } from './invalidation-delivery.js';
import type { InvalidationMessage } from './invalidation-message.js';

export class ClusterInvalidator implements Invalidator {
  constructor(
    private readonly local: Invalidator,
    private readonly delivery: InvalidationDelivery,
    private readonly newId: () => string,
  ) {}

  async purge(url: string): Promise<UrlInvalidationResult> {
    const result = await this.local.purge(url);
    await this.delivery.publish({ id: this.newId(), type: 'purge', url });
    return result;
  }

  async purgeBatch(urls: readonly string[]): Promise<BatchResult> {
    const result = await this.local.purgeBatch(urls);
    await this.delivery.publish({ id: this.newId(), type: 'purge_batch', urls: [...urls] });
    return result;
  }

  async ban(spec: BanSpec): Promise<InvalidationResult> {
    const result = await this.local.ban(spec);
    await this.delivery.publish({ id: this.newId(), type: 'ban', ...definedFields(spec) });
    return result;
  }

  async refresh(url: string): Promise<UrlInvalidationResult> {
    const result = await this.local.refresh(url);
    await this.delivery.publish({ id: this.newId(), type: 'refresh', url });
    return result;
  }

  isInvalidated: Invalidator['isInvalidated'] = (entry) => this.local.isInvalidated(entry);
  activeBans: Invalidator['activeBans'] = () => this.local.activeBans();
  matchingBans: Invalidator['matchingBans'] = (entry) => this.local.matchingBans(entry);
  recent: Invalidator['recent'] = () => this.local.recent();
  counts: Invalidator['counts'] = () => this.local.counts();
}

function definedFields(spec: BanSpec): BanSpec {
  const fields: BanSpec = {};
  if (spec.host_regex) fields.host_regex = spec.host_regex;
  if (spec.path_regex) fields.path_regex = spec.path_regex;
  if (spec.surrogate_key) fields.surrogate_key = spec.surrogate_key;
  return fields;
}

/** Applies an invalidation another node sent; it was validated where it began. */
export async function applyRemoteInvalidation(local: Invalidator, message: InvalidationMessage): Promise<void> {
  switch (message.type) {
    case 'purge':
      await local.purge(message.url);
      return;
    case 'purge_batch':
      await local.purgeBatch(message.urls);
      return;
    case 'ban':
      await local.ban(message);
      return;
    case 'refresh':
      await local.refresh(message.url);
      return;
  }
}
