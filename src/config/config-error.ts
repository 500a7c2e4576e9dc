// The one error a configuration problem raises. It carries every problem found, each with the key
// path it concerns, so an operator fixes the whole file in one pass.

/** One problem: `path` like `routes[2].cache.ttl_override` ('' for the file as a whole). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** A key path as segments: object keys and list indexes. */
export type KeyPath = readonly (string | number)[];

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['routes', 2, 'cache']` gives `routes[2].cache`; odd keys are quoted: `admin["a b"]`. */
export function formatKeyPath(path: KeyPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (!PLAIN_KEY.test(segment)) text += `[${JSON.stringify(segment)}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

/** One line per problem, as `svc config validate` prints it: `<path>: <message>`. */
export function formatConfigIssue(issue: ConfigIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

export class ConfigError extends Error {
  readonly code = 'invalid_config';
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], source?: string) {
    const where = source === undefined ? 'invalid configuration' : `invalid configuration in ${source}`;
    super(`${where}:\n${issues.map((issue) => `  ${formatConfigIssue(issue)}`).join('\n')}`);
    this.issues = issues;
  }
}

/** A valid configuration that a reload cannot apply (a key that needs a restart): the running one stays. */
export class ReloadRefusedError extends Error {
  override readonly name = 'ReloadRefusedError';
  readonly code = 'restart_required';
  constructor(readonly reasons: readonly string[]) {
    super(`the configuration was not reloaded, the running one stays: ${reasons.join('; ')}`);
  }
}
