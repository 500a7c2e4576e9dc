// A failure the CLI reports as one line on stderr with its exit code: 2 for usage errors, 1 otherwise.

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}
