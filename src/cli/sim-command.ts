// `svc sim list`, `svc sim run <scenario>` and `svc sim seeds <scenario>`: the deterministic cluster simulator from the command
// line (issue 5). The JSON report is reproducible from its seed; wall time goes to the table or stderr.

import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { defineCommand } from 'citty';
import { failureLines, passed, reportJson, reportTable } from '../../sim/report.js';
import { InvalidScenarioOptionsError, runScenario, UnknownScenarioError } from '../../sim/runner.js';
import { SCENARIOS } from '../../sim/scenarios/index.js';
import { renderSvgChart } from '../../sim/svg-chart.js';
// svc's own scenarios register themselves with the simulator (before the lists below are read).
import '../clustering/scenarios/index.js';
import { withPositionals } from './positionals.js';

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List the simulator scenarios' },
  run() {
    const width = Math.max(...SCENARIOS.map((scenario) => scenario.name.length));
    for (const scenario of SCENARIOS) {
      console.log(`${scenario.name.padEnd(width)}  ${scenario.description} (default ${scenario.defaultNodes} nodes)`);
    }
  },
});

/** Parses an optional numeric flag; undefined when absent, NaN (rejected by the runner) when malformed. */
function numberFlag(value: string | undefined): number | undefined {
  return value === undefined ? undefined : value.trim() === '' ? Number.NaN : Number(value);
}

/** What `run` and `seeds` both take. */
const scenarioArgs = {
  scenario: { type: 'positional', required: true, description: 'scenario name (see `svc sim list`)' },
  nodes: { type: 'string', description: 'cluster size (default: the scenario’s own)' },
  duration: { type: 'string', description: 'simulated seconds of the main phase, for scenarios that have one' },
} as const;

const runCommand = defineCommand({
  meta: { name: 'run', description: 'Run one scenario and print its report' },
  args: {
    ...scenarioArgs,
    seed: { type: 'string', description: 'root seed of the run (default 1)' },
    json: { type: 'boolean', description: 'print the JSON report instead of the table' },
    svg: { type: 'string', description: 'write the chart as SVG to this file' },
  },
  async run({ args }) {
    let run;
    try {
      run = await runScenario(args.scenario, {
        nodes: numberFlag(args.nodes),
        seed: numberFlag(args.seed),
        durationS: numberFlag(args.duration),
      });
    } catch (error) {
      if (!(error instanceof UnknownScenarioError || error instanceof InvalidScenarioOptionsError)) throw error;
      console.error(error.message);
      process.exitCode = 2;
      return;
    }
    const { result, wallMs } = run;
    if (args.svg !== undefined) await writeFile(args.svg, renderSvgChart(result.chart));
    if (args.json) {
      process.stdout.write(reportJson(result));
      console.error(`wall time ${(wallMs / 1000).toFixed(2)} s`);
      for (const line of failureLines(result)) console.error(line);
    } else {
      process.stdout.write(reportTable(result, wallMs));
    }
    // exitCode rather than exit(): output is flushed before the process ends.
    if (!passed(result)) process.exitCode = 1;
  },
});

const seedsCommand = defineCommand({
  meta: { name: 'seeds', description: 'Run one scenario over a range of seeds; print the failing ones and a summary' },
  args: {
    ...scenarioArgs,
    from: { type: 'string', description: 'first seed (default 1)' },
    to: { type: 'string', description: 'last seed (default 1000)' },
  },
  async run({ args }) {
    const from = numberFlag(args.from) ?? 1;
    const to = numberFlag(args.to) ?? 1000;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to) {
      console.error(`expected --from <= --to, whole numbers, got ${args.from ?? 1} and ${args.to ?? 1000}`);
      process.exitCode = 2;
      return;
    }
    const startedMs = performance.now();
    let failedSeeds = 0;
    for (let seed = from; seed <= to; seed++) {
      let result;
      try {
        ({ result } = await runScenario(args.scenario, { nodes: numberFlag(args.nodes), seed, durationS: numberFlag(args.duration) }));
      } catch (error) {
        if (!(error instanceof UnknownScenarioError || error instanceof InvalidScenarioOptionsError)) throw error;
        console.error(error.message);
        process.exitCode = 2;
        return;
      }
      if (passed(result)) continue;
      failedSeeds += 1;
      for (const line of failureLines(result)) console.log(line);
    }
    const wallS = ((performance.now() - startedMs) / 1000).toFixed(1);
    console.log(`${args.scenario}: seeds ${from}-${to}, ${to - from + 1 - failedSeeds} passed, ${failedSeeds} failed, wall time ${wallS} s`);
    if (failedSeeds > 0) process.exitCode = 1;
  },
});

const scenarioNames = { values: SCENARIOS.map((scenario) => scenario.name) };
withPositionals(runCommand, scenarioNames);
withPositionals(seedsCommand, scenarioNames);

export const simCommand = defineCommand({
  meta: { name: 'sim', description: 'Run the deterministic cluster simulator' },
  subCommands: { list: listCommand, run: runCommand, seeds: seedsCommand },
});
