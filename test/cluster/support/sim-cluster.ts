// Runs real cluster members on the deterministic simulator (sim/): one SimNetwork, one member per
// simulated node, each on its node's transport, clock and random.
import { createClusterMember } from '../../../cluster/cluster-member.js';
import type { ClusterMember } from '../../../cluster/cluster-member.js';
import type { MembershipConfig } from '../../../cluster/membership/config.js';
import type { PushPullDelegate } from '../../../cluster/membership/membership.js';
import { createRandom } from '../../../cluster/seeded-random.js';
import { SimNetwork } from '../../../sim/sim-network.js';

export interface SimCluster {
  readonly network: SimNetwork;
  readonly members: Map<string, ClusterMember>;
  /** Advances virtual time. */
  run(ms: number): Promise<void>;
  /** Adds, starts and (if `seed` is given) joins one more member; the join runs in the background. */
  add(name: string, seed?: string): Promise<ClusterMember>;
  /** The members whose process still runs (not crashed), in insertion order. */
  running(): ClusterMember[];
  crash(name: string): void;
}

export async function simCluster(
  size: number,
  options: {
    seed?: string;
    config?: Partial<MembershipConfig>;
    /** The push-pull delegate of the member of each name, if it has one. */
    delegate?: (name: string) => PushPullDelegate | undefined;
  } = {},
): Promise<SimCluster> {
  const network = new SimNetwork({ random: createRandom(options.seed ?? 'cluster-test') });
  const members = new Map<string, ClusterMember>();
  const crashed = new Set<string>();
  const cluster: SimCluster = {
    network,
    members,
    run: async (ms) => {
      await network.clock.runFor(ms);
    },
    add: async (name, seed) => {
      const node = network.addNode(name);
      const member = createClusterMember({
        name,
        transport: node.transport,
        clock: node.clock,
        random: node.random,
        config: options.config,
        delegate: options.delegate?.(name),
      });
      members.set(name, member);
      await member.start();
      if (seed !== undefined) {
        member.join([seed]).catch(() => {
          // A test that needs the join to succeed checks membership, not this promise.
        });
      }
      return member;
    },
    running: () => [...members.entries()].filter(([name]) => !crashed.has(name)).map(([, member]) => member),
    crash: (name) => {
      network.crash(name);
      crashed.add(name);
    },
  };
  for (let i = 0; i < size; i++) await cluster.add(`node-${i}`, i === 0 ? undefined : 'node-0');
  return cluster;
}

/** Whether every given member holds the same membership checksum. */
export function converged(members: readonly ClusterMember[]): boolean {
  const first = members[0]?.checksum();
  return members.every((member) => member.checksum() === first);
}

/** State of `name` as `observer` sees it. */
export function stateOf(observer: ClusterMember, name: string): string | undefined {
  return observer.member(name)?.state;
}

/** Runs in steps of `stepMs` until `condition` holds or `limitMs` passes; returns the time it took. */
export async function runUntil(
  cluster: SimCluster,
  condition: () => boolean,
  limitMs: number,
  stepMs = 100,
): Promise<number | undefined> {
  const start = cluster.network.clock.now();
  while (cluster.network.clock.now() - start <= limitMs) {
    if (condition()) return cluster.network.clock.now() - start;
    await cluster.run(stepMs);
  }
  return undefined;
}
