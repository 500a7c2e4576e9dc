// The bounded list of recent invalidations the admin API and the dashboard show, newest first.
import type { RecentInvalidation } from './invalidator.js';

export class RecentInvalidations {
  /** Oldest first, so adding is a push; read newest first. */
  readonly #items: RecentInvalidation[] = [];

  constructor(readonly limit: number) {}

  add(item: RecentInvalidation): void {
    this.#items.push(item);
    if (this.#items.length > this.limit) this.#items.splice(0, this.#items.length - this.limit);
  }

  newestFirst(): RecentInvalidation[] {
    return this.#items.slice().reverse();
  }
}
