// Linux network namespaces for tests that need a network they can cut: each namespace has its own
// interfaces, addresses and routes, so processes started in them (`ip netns exec`) talk over veth pairs
// and bridges the test creates, and the host's own network is never touched. Needs root and `ip`.
import { execFile, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs `ip` with these arguments; a failure carries what `ip` said. */
export async function ip(...args: string[]): Promise<void> {
  try {
    await execFileAsync('ip', args, { timeout: 10_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`ip ${args.join(' ')} failed: ${stderr || (error as Error).message}`, { cause: error });
  }
}

/** Why namespaces cannot be made here (not root, no `ip`, a kernel or sandbox that refuses), or undefined. */
export async function namespacesUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add)';
  const probe = `svc-probe-${process.pid}`;
  try {
    await ip('netns', 'add', probe);
  } catch (error) {
    return `network namespaces cannot be made here: ${(error as Error).message}`;
  }
  await ip('netns', 'del', probe);
  return undefined;
}

/** The argument list that runs `command` inside namespace `namespace`. */
export function inNamespace(namespace: string, command: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: 'ip', args: ['netns', 'exec', namespace, command, ...args] };
}

/**
 * Waits for the line `ready` on the child's stdout, the sign a relay started in a namespace
 * (netns-relay.ts) gives once it listens; kills it after `timeoutMs`.
 */
export async function readyLine(child: ChildProcess, what: string, timeoutMs: number): Promise<void> {
  const lines = createInterface({ input: child.stdout! });
  const timeout = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    for await (const line of lines) if (line === 'ready') return;
  } finally {
    clearTimeout(timeout);
    lines.close();
  }
  throw new Error(`${what} exited before it was ready`);
}
