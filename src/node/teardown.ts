// What a starting node has opened, undone in reverse order: by `stop()`, or at once when a later
// startup step fails, so that a node which cannot start (its port taken, say) closes what it had
// already opened and leaves nothing running that would keep the process alive.
type Step = () => Promise<void> | void;

export class Teardown {
  private readonly steps: Step[] = [];

  /** Registers how to undo what was just opened. */
  add(step: Step): void {
    this.steps.push(step);
  }

  /** Runs every step, newest first, each once; all run even when one fails, and the first failure is thrown. */
  async run(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
