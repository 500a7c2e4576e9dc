// Randomness as the cluster library sees it: always seeded, never Math.random, so a simulated run is
// reproducible from its root seed. Each subsystem takes its own `fork`, so adding a draw in one
// subsystem does not shift the sequence another one sees.

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound); `bound` must be a positive integer. */
  int(bound: number): number;
  /** An independent generator derived from this one's seed and `label`. */
  fork(label: string): Random;
}
