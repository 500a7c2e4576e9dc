// What a scenario is and what it returns. A scenario builds a simulated cluster from its options,
// runs faults and measurements on virtual time, and returns figures, pass/fail checks and a chart.
// Results hold only simulated quantities, so the same options and seed give the same result.

export interface ScenarioOptions {
  /** Cluster size. */
  nodes: number;
  /** Root seed of every random draw in the run. */
  seed: number;
  /** Simulated length of the scenario's main phase in seconds, when the scenario has one. */
  durationS?: number;
}

export interface Figure {
  name: string;
  /** null when the quantity was never reached (e.g. no convergence within the budget). */
  value: number | null;
  unit: string;
}

export interface Check {
  name: string;
  passed: boolean;
  detail: string;
}

/** One line of a chart: [x, y] points, x in simulated seconds. */
export interface Series {
  name: string;
  points: [number, number][];
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** The y axis runs from 0 to this value. */
  yMax: number;
  series: Series[];
}

export interface ScenarioResult {
  scenario: string;
  options: ScenarioOptions;
  figures: Figure[];
  checks: Check[];
  chart: Chart;
  /** Virtual time the run covered and the events the clock fired. */
  simulatedMs: number;
  events: number;
}

export interface Scenario {
  name: string;
  description: string;
  /** The cluster size a run uses when --nodes is not given. */
  defaultNodes: number;
  run(options: ScenarioOptions): Promise<ScenarioResult>;
}
