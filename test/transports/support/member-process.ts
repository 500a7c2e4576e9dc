// A cluster member running in its own OS process (a fixture script under test/transports/fixtures/),
// reporting what it sees as one JSON event per line and taking commands on stdin: the driver of the
// multi-process tests of every transport.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface MemberEvent {
  type: string;
  member?: string;
  origin?: string;
  from?: string;
  text?: string;
  address?: string;
  peerId?: string;
}

export class MemberProcess {
  readonly events: MemberEvent[] = [];
  private waiters: { match: (event: MemberEvent) => boolean; resolve: (event: MemberEvent) => void }[] = [];
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<void>;

  constructor(
    script: string,
    readonly name: string,
    args: string[],
  ) {
    this.child = spawn(process.execPath, [script, name, ...args], { stdio: 'pipe' });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.stderr.on('data', (chunk: Buffer) => process.stderr.write(`[${name}] ${chunk.toString()}`));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as MemberEvent;
      this.events.push(event);
      for (const waiter of [...this.waiters]) {
        if (!waiter.match(event)) continue;
        this.waiters = this.waiters.filter((other) => other !== waiter);
        waiter.resolve(event);
      }
    });
  }

  /** The first event from now on (or already seen, when `seen` allows) that matches, within `timeoutMs`. */
  waitFor(match: (event: MemberEvent) => boolean, timeoutMs: number, what: string, seen = false): Promise<MemberEvent> {
    const earlier = seen ? this.events.find(match) : undefined;
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      });
    });
  }

  /** A command on the member's stdin; ignored once the process is gone. */
  send(command: string): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.stdin.write(`${command}\n`);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}
