// Reads metric values, from a prom-client registry or from the text exposition of /metrics.
import type { Registry } from 'prom-client';

export type Labels = Record<string, string>;

function matches(actual: Partial<Record<string, string | number>>, wanted: Labels): boolean {
  return Object.entries(wanted).every(([name, value]) => String(actual[name]) === value);
}

/** The value of the series of `name` with `labels`; undefined when there is no such series. */
export async function registryValue(registry: Registry, name: string, labels: Labels): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const { values } = await metric.get();
  return values.find((value) => matches(value.labels, labels))?.value;
}

/** The value of the series of `name` with `labels` in a text exposition; undefined when absent. */
export function exposedValue(text: string, name: string, labels: Labels): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const actual: Record<string, string> = {};
    for (const pair of match[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) actual[pair[1]!] = pair[2]!;
    if (matches(actual, labels)) return Number(match[3]);
  }
  return undefined;
}
