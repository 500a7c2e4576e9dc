// Runs a shell command on a real pseudo-terminal, through util-linux's `script` (present on Debian and
// on this project's machines), so that a test can press keys the way a person at a terminal does:
// what the test writes reaches the command as terminal input, in whatever mode the command set.
import { spawn, spawnSync } from 'node:child_process';
import { eventually } from '../../support/eventually.js';

/** Why terminal tests cannot run here, or undefined when `script` is present. */
export const PTY_MISSING: string | undefined =
  spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0 ? undefined : 'util-linux `script` is missing: no pseudo-terminal to test with';

/** Quotes `word` for /bin/sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export interface PtyRun {
  /** Everything the terminal showed so far (carriage returns removed). */
  readonly output: () => string;
  /** Types `keys` on the terminal. */
  type(keys: string): void;
  /** Waits until the terminal has shown text matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the command's exit status once `script` ends. */
  readonly exited: Promise<number | null>;
  kill(): void;
}

export function runInPty(command: string, env: NodeJS.ProcessEnv = {}): PtyRun {
  // -q: no start and end notes; -f: flush at once; -e: the command's exit status; -c: the command.
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH, SHELL: '/bin/sh', TERM: 'xterm', NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk.replaceAll('\r', '')));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk.replaceAll('\r', '')));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    output: () => output,
    type: (keys) => void child.stdin.write(keys),
    waitFor: async (pattern, timeoutMs = 15_000) => {
      await eventually(`the terminal showing ${pattern}`, () => output, (shown) => pattern.test(shown), { timeoutMs });
    },
    exited,
    kill: () => void child.kill('SIGKILL'),
  };
}
