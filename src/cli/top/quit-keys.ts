// The keys that end a live `svc top` on a terminal: `q`, `Q` and Ctrl-C, at once rather than at the
// next refresh. The terminal is put in raw mode so a key arrives without Enter; raw mode also turns
// Ctrl-C into a byte (0x03) instead of SIGINT, so it is read here too. The terminal's mode is given
// back however top ends: a key, a signal (SIGINT or SIGTERM from another process), or an error.
import type { ReadStream } from 'node:tty';

const QUIT_BYTES = new Set([0x71 /* q */, 0x51 /* Q */, 0x03 /* Ctrl-C */]);
const QUIT_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface QuitKeys {
  /** Aborted when a quit key is pressed or a quit signal arrives. */
  readonly signal: AbortSignal;
  /** Gives the terminal its mode back and stops reading it; safe to call more than once. */
  restore(): void;
}

/** Watches `input`, a terminal, for the quit keys until restore(). */
export function watchQuitKeys(input: ReadStream): QuitKeys {
  const quit = new AbortController();
  const wasRaw = input.isRaw;
  const onData = (chunk: Buffer): void => {
    if (chunk.some((byte) => QUIT_BYTES.has(byte))) quit.abort();
  };
  const onSignal = (): void => quit.abort();
  input.setRawMode(true);
  input.on('data', onData);
  input.resume();
  for (const name of QUIT_SIGNALS) process.on(name, onSignal);
  let restored = false;
  return {
    signal: quit.signal,
    restore: () => {
      if (restored) return;
      restored = true;
      for (const name of QUIT_SIGNALS) process.off(name, onSignal);
      input.off('data', onData);
      input.setRawMode(wasRaw);
      // A paused stdin holds no handle open: the process can end.
      input.pause();
    },
  };
}
