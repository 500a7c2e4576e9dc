// What one directed link does to the packets crossing it, as plain data: a latency distribution and
// the probabilities of loss, duplication and reordering. A network has one default link and any
// number of per-link overrides, so a scenario describes its network as an options object.

import type { Random } from '../cluster/random.js';
import { InvalidLinkOptionsError } from './errors.js';

export type LatencyDistribution =
  | { kind: 'fixed'; ms: number }
  | { kind: 'uniform'; minMs: number; maxMs: number }
  /** A normal draw clamped to [minMs, maxMs], so a tail never produces a negative delay. */
  | { kind: 'normal'; meanMs: number; stdDevMs: number; minMs: number; maxMs: number };

export interface LinkOptions {
  /** One-way delay of a packet or of a request/response leg. */
  latency: LatencyDistribution;
  /** Share of packets dropped. Reliable requests are never lost (they model TCP). */
  lossProbability: number;
  /** Share of delivered packets that arrive twice, each copy with its own delay. */
  duplicationProbability: number;
  /** Share of packets delayed by an extra uniform draw in [0, reorderJitterMs], overtaken by later ones. */
  reorderProbability: number;
  reorderJitterMs: number;
}

/**
 * A LAN: 0.1–1 ms one-way, nothing lost, duplicated or reordered beyond what the latency spread
 * does. This is the network issue 5 measures the cluster's default profile on.
 */
export const LAN_LINK: Readonly<LinkOptions> = Object.freeze({
  latency: Object.freeze({ kind: 'uniform', minMs: 0.1, maxMs: 1 }),
  lossProbability: 0,
  duplicationProbability: 0,
  reorderProbability: 0,
  reorderJitterMs: 0,
});

function checkProbability(name: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new InvalidLinkOptionsError(`${name} must be in [0, 1], got ${value}`);
}

function checkMs(name: string, value: number): void {
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new InvalidLinkOptionsError(`${name} must be a finite number >= 0, got ${value}`);
  }
}

function checkLatency(latency: LatencyDistribution): void {
  switch (latency.kind) {
    case 'fixed':
      checkMs('latency.ms', latency.ms);
      return;
    case 'uniform':
      checkMs('latency.minMs', latency.minMs);
      checkMs('latency.maxMs', latency.maxMs);
      if (latency.maxMs < latency.minMs) throw new InvalidLinkOptionsError('latency.maxMs is below latency.minMs');
      return;
    case 'normal':
      checkMs('latency.meanMs', latency.meanMs);
      checkMs('latency.stdDevMs', latency.stdDevMs);
      checkMs('latency.minMs', latency.minMs);
      checkMs('latency.maxMs', latency.maxMs);
      if (latency.maxMs < latency.minMs) throw new InvalidLinkOptionsError('latency.maxMs is below latency.minMs');
      return;
    default:
      throw new InvalidLinkOptionsError(`unknown latency kind ${JSON.stringify((latency as { kind: unknown }).kind)}`);
  }
}

/** Merges `override` onto `base` and checks the result; throws InvalidLinkOptionsError. */
export function resolveLink(base: Readonly<LinkOptions>, override: Partial<LinkOptions> = {}): LinkOptions {
  const link: LinkOptions = { ...base, ...override };
  checkLatency(link.latency);
  checkProbability('lossProbability', link.lossProbability);
  checkProbability('duplicationProbability', link.duplicationProbability);
  checkProbability('reorderProbability', link.reorderProbability);
  checkMs('reorderJitterMs', link.reorderJitterMs);
  return link;
}

/** One draw of a one-way delay in milliseconds. */
export function sampleLatencyMs(latency: LatencyDistribution, random: Random): number {
  switch (latency.kind) {
    case 'fixed':
      return latency.ms;
    case 'uniform':
      return latency.minMs + random.next() * (latency.maxMs - latency.minMs);
    case 'normal': {
      // Box–Muller; 1 - next() is in (0, 1], so the logarithm is finite.
      const radius = Math.sqrt(-2 * Math.log(1 - random.next()));
      const value = latency.meanMs + latency.stdDevMs * radius * Math.cos(2 * Math.PI * random.next());
      return value < latency.minMs ? latency.minMs : value > latency.maxMs ? latency.maxMs : value;
    }
  }
}
