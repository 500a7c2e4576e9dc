// What `/readyz` reports (spec §3.2): named startup phases (log replay, ring build, join…) that
// are active then complete, and named conditions that must all hold for the node to take traffic.
// A drained node is ready again only once undrained (`POST /v1/undrain`, drain-control.ts) or restarted.
import type { NodeMetrics } from './metrics.js';

export interface ReadinessCondition {
  /** Stable name, e.g. `listeners_bound`, `warm_store_indexed`. */
  name: string;
  ready: boolean;
  /** Why the condition holds or not, for a person reading `/readyz?detail=1`. */
  reason: string;
  /** When it last changed, ISO 8601 UTC. */
  since: string;
  /**
   * Whether the node is ready only when this holds. An advisory condition (cluster mode drift) is
   * reported but keeps no node out of rotation: every node sees a drift, so gating on it would take
   * the whole cluster out of its load balancer for one misconfigured member.
   */
  gating: boolean;
}

export type ReadinessStatus = 'ready' | 'not_ready' | 'draining' | 'drained';

export class Readiness {
  private readonly conditions = new Map<string, ReadinessCondition>();
  private drainState: 'serving' | 'draining' | 'drained' = 'serving';
  private readonly startedAtMs: number;

  constructor(
    private readonly metrics: NodeMetrics,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAtMs = now();
  }

  /** Declares a condition that is not met yet, so readiness waits for it. */
  expect(name: string, reason: string): void {
    this.set(name, false, reason);
  }

  set(name: string, ready: boolean, reason: string, gating = true): void {
    const previous = this.conditions.get(name);
    if (previous && previous.ready === ready && previous.reason === reason) return;
    const wasReady = this.isReady();
    this.conditions.set(name, { name, ready, reason, since: new Date(this.now()).toISOString(), gating });
    this.metrics.startupConditionReady.set({ condition: name }, ready ? 1 : 0);
    if (!wasReady && this.isReady() && !this.firstReadyObserved) {
      this.firstReadyObserved = true;
      this.metrics.startupDuration.observe((this.now() - this.startedAtMs) / 1000);
    }
  }

  private firstReadyObserved = false;

  /** Runs one startup phase, with `svc_startup_phase{phase}` at 1 while it runs and 0 after. */
  async phase<T>(name: string, work: () => Promise<T>): Promise<T> {
    this.metrics.startupPhase.set({ phase: name }, 1);
    try {
      return await work();
    } finally {
      this.metrics.startupPhase.set({ phase: name }, 0);
    }
  }

  isReady(): boolean {
    if (this.drainState !== 'serving' || this.conditions.size === 0) return false;
    for (const condition of this.conditions.values()) if (condition.gating && !condition.ready) return false;
    return true;
  }

  status(): ReadinessStatus {
    if (this.drainState !== 'serving') return this.drainState;
    return this.isReady() ? 'ready' : 'not_ready';
  }

  detail(): ReadinessCondition[] {
    return [...this.conditions.values()];
  }

  markDraining(): void {
    if (this.drainState === 'serving') this.drainState = 'draining';
  }

  markDrained(): void {
    this.drainState = 'drained';
  }

  /** Undrained: ready again as soon as every gating condition holds. */
  markServing(): void {
    this.drainState = 'serving';
  }
}
