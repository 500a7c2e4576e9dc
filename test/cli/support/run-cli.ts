// Runs the `svc` CLI as a child process and collects what it printed and how it exited.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The executable under test (compiled); see admin-cli-main.ts for why it is not dist/src/cli/main.js yet. */
export const CLI_PATH = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<CliRun> {
  // Only what the CLI needs: a token in the test runner's own environment must not leak in.
  const env = { PATH: process.env.PATH, NO_COLOR: '1', ...options.env };
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
