// Worker output reaches standard output through the primary, whole lines at a time. Each worker
// writes to a pipe of its own and the primary is the one writer of the node's standard output, so
// lines of two workers are never interleaved, whatever their length and whatever standard output
// is (a pipe guarantees whole writes only up to PIPE_BUF, 4 KiB, and pino's batches are larger).
// A worker killed in the middle of a line leaves that part of a line, ended, never glued to the
// next worker's line.
import type { Readable } from 'node:stream';

export interface LineSink {
  /** One line, ending with its newline. */
  write(line: string): void;
}

/** A line longer than this (a worker writing without newlines) is passed on in pieces of this size. */
const MAX_LINE_CHARS = 1024 * 1024;

/** Passes every line read from `stream` to `sink`, one call per line. */
export function relayLines(stream: Readable, sink: LineSink): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    let text = partial + chunk;
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      sink.write(text.slice(start, end + 1));
      start = end + 1;
    }
    text = text.slice(start);
    while (text.length > MAX_LINE_CHARS) {
      sink.write(`${text.slice(0, MAX_LINE_CHARS)}\n`);
      text = text.slice(MAX_LINE_CHARS);
    }
    partial = text;
  });
  stream.on('end', () => {
    if (partial !== '') sink.write(`${partial}\n`);
    partial = '';
  });
}
