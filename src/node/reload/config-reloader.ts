// Reloading the configuration of a running node (SIGHUP, `POST /v1/reload`, `svc reload`). Each part
// of the node that can take a new value while it runs registers a step for the keys it covers; a key
// no step covers cannot change without a restart, and a reload that changes one is refused whole, the
// running configuration staying as it was. A new configuration section is therefore refused until
// its owner registers a step for it: nothing changes half-applied by accident.
//
// A reload runs in two phases: every step first checks the new values without touching the node
// (and may refuse), then, only when all agreed, every step commits, which cannot fail. Requests in
// flight finish on what they started with; the cache and the connections stay.
import { isDeepStrictEqual } from 'node:util';
import type { Config } from '../../config/index.js';
import { redactConfig, ReloadRefusedError } from '../../config/index.js';

/** Swaps the new values in; must not throw (all checks belong to `prepare`). */
export type Commit = () => void;

export interface ReloadStep {
  /** Dot-separated key paths (`routes`, `admin.token`); the step runs when any of them changed. */
  keys: readonly string[];
  /**
   * Whether the files the step's keys name changed though the keys did not (a renewed certificate
   * under the same path): the step then runs, and its keys are reported changed.
   */
  changedOnDisk?(next: Config): Promise<boolean>;
  /** Checks the new configuration and returns how to apply it; throws ReloadRefusedError to refuse. */
  prepare(next: Config, previous: Config): Commit | Promise<Commit>;
}

/** What a reload did: the keys whose new values now apply (empty when nothing changed). */
export interface ReloadOutcome {
  status: 'reloaded' | 'unchanged';
  changed: string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueAt(root: unknown, path: string): unknown {
  let node = root;
  for (const key of path.split('.')) node = isObject(node) ? node[key] : undefined;
  return node;
}

/** A value as a refusal shows it: scalars only (lists and blocks would make a line unreadable). */
function shown(value: unknown): string | undefined {
  if (value === undefined) return 'nothing';
  return typeof value === 'object' ? undefined : JSON.stringify(value);
}

export class ConfigReloader {
  readonly #steps: ReloadStep[] = [];
  readonly #restartOnly = new Map<string, string>();

  register(step: ReloadStep): void {
    this.#steps.push(step);
  }

  /** Says why a key cannot change while the node runs; the refusal quotes it. */
  restartOnly(key: string, reason: string): void {
    this.#restartOnly.set(key, reason);
  }

  /** The changed key paths, as fine as the registered steps need: a covered key, or an uncovered one. */
  changedKeys(previous: Config, next: Config): string[] {
    const covered = this.#steps.flatMap((step) => step.keys);
    const changed: string[] = [];
    const walk = (before: unknown, after: unknown, path: string): void => {
      if (isDeepStrictEqual(before, after)) return;
      const deeper = path === '' || covered.some((key) => key.startsWith(`${path}.`));
      if (!covered.includes(path) && deeper && (isObject(before) || before === undefined) && (isObject(after) || after === undefined)) {
        const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
        for (const key of keys) walk((before as Record<string, unknown> | undefined)?.[key], (after as Record<string, unknown> | undefined)?.[key], path === '' ? key : `${path}.${key}`);
        return;
      }
      changed.push(path);
    };
    walk(previous, next, '');
    return changed.sort();
  }

  #restartReason(key: string): string {
    for (let path = key; path !== ''; path = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : '') {
      const reason = this.#restartOnly.get(path);
      if (reason !== undefined) return reason;
    }
    return 'it is read at startup only';
  }

  /** Applies `next` where it differs from `previous`, or throws ReloadRefusedError with every reason. */
  async reload(previous: Config, next: Config): Promise<ReloadOutcome> {
    const changed = this.changedKeys(previous, next);
    const covered = new Set(this.#steps.flatMap((step) => step.keys));
    const shownBefore = redactConfig(previous);
    const shownAfter = redactConfig(next);
    const refusals = changed
      .filter((key) => !covered.has(key))
      .map((key) => {
        const [was, now] = [shown(valueAt(shownBefore, key)), shown(valueAt(shownAfter, key))];
        const values = was !== undefined && now !== undefined ? ` (${was} → ${now})` : '';
        return `${key} cannot change without a restart: ${this.#restartReason(key)}${values}`;
      });
    if (refusals.length > 0) throw new ReloadRefusedError(refusals);
    for (const step of this.#steps) {
      if (step.changedOnDisk === undefined || step.keys.some((key) => changed.includes(key))) continue;
      if (await step.changedOnDisk(next)) changed.push(...step.keys);
    }
    changed.sort();
    if (changed.length === 0) return { status: 'unchanged', changed };
    const commits: Commit[] = [];
    const reasons: string[] = [];
    for (const step of this.#steps.filter((candidate) => candidate.keys.some((key) => changed.includes(key)))) {
      try {
        commits.push(await step.prepare(next, previous));
      } catch (error) {
        if (!(error instanceof ReloadRefusedError)) throw error;
        reasons.push(...error.reasons);
      }
    }
    if (reasons.length > 0) throw new ReloadRefusedError(reasons);
    for (const commit of commits) commit();
    return { status: 'reloaded', changed };
  }
}
