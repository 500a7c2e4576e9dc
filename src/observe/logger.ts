// The process logger: pino, one JSON object per line on standard output, with `time` as an ISO 8601
// UTC string and `level` as its name (spec §2.4). Writes go through an asynchronous destination so
// that logging never blocks a request; `pretty` is for a person at a terminal (`log.format`).
import { pino, type Logger, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  format?: LogFormat;
  level?: string;
  /** Where lines go; standard output by default. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

export type { Logger };

// Lines are written the way nginx's `access_log … buffer= flush=` writes them: gathered until a
// batch is worth a write, and never held longer than FLUSH_EVERY_MS. Unbatched, every sampled
// access line was a write (and a thread-pool round trip) of its own: 200 a second at 20k requests a
// second. sync:false hands the writes to the event loop, so a slow stdout never blocks a request.
// On exit pino flushes what is gathered; a kill -9 loses at most FLUSH_EVERY_MS of lines.
const BATCH_BYTES = 4096;
const FLUSH_EVERY_MS = 100;

/** Where LogOutput's lines go. */
interface Sink {
  write(line: string): void;
  flush(done?: (error?: Error) => void): void;
  destroy(): void;
}

/**
 * Standard output in either format, switchable while the process runs (a configuration reload).
 * Every line is made as JSON; `pretty` rewrites it on its way to the same batched destination, so a
 * switch neither reorders lines nor loses the ones still gathered.
 */
export class LogOutput implements DestinationStream {
  readonly #sink: Sink;
  #format: LogFormat = 'json';
  #pretty: ((line: string) => string) | undefined;
  #abandoned = false;

  /**
   * `format` of the lines; `stream` where they go instead of standard output's batched destination (a
   * data-plane worker thread writes to its own stdout, which the main thread relays whole lines of).
   */
  constructor(format: LogFormat = 'json', stream?: NodeJS.WritableStream) {
    this.setFormat(format);
    if (stream !== undefined) {
      this.#sink = new BatchedStream(stream);
      return;
    }
    const destination = pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, periodicFlush: FLUSH_EVERY_MS });
    // What reads standard output is gone (a closed pipe): nothing written will ever be read.
    destination.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') this.abandon();
    });
    this.#sink = destination;
  }

  get format(): LogFormat {
    return this.#format;
  }

  setFormat(format: LogFormat): void {
    this.#format = format;
    // Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
    const colorize = process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
    this.#pretty = format === 'pretty' ? prettyFactory({ translateTime: 'SYS:standard', colorize }) : undefined;
  }

  write(line: string): void {
    if (!this.#abandoned) this.#sink.write(this.#pretty ? this.#pretty(line) : line);
  }

  /** pino's `logger.flush(cb)` calls this. */
  flush(callback?: (error?: Error) => void): void {
    if (this.#abandoned) callback?.();
    else this.#sink.flush(callback);
  }

  /**
   * Stops writing, for good: what reads standard output is gone (a data-plane worker whose primary
   * died). Lines are dropped from then on. Without this the exit would hang: its last flush retries a
   * write that fails every time (sonic-boom retries any error there, a broken pipe included).
   */
  abandon(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    this.#sink.destroy();
  }
}

/**
 * Lines for a stream, gathered as the standard-output destination gathers them (BATCH_BYTES, at most
 * FLUSH_EVERY_MS): a worker thread's stdout is a message to the main thread per write, which measured
 * about 130 µs of the worker's CPU each.
 */
class BatchedStream implements Sink {
  #lines: string[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  write(line: string): void {
    this.#lines.push(line);
    this.#bytes += line.length;
    if (this.#bytes >= BATCH_BYTES) this.#send();
    else this.#timer ??= setTimeout(() => this.#send(), FLUSH_EVERY_MS).unref();
  }

  flush(done?: (error?: Error) => void): void {
    this.#send();
    this.stream.write('', () => done?.());
  }

  destroy(): void {
    clearTimeout(this.#timer);
    this.#lines = [];
  }

  #send(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0) return;
    this.stream.write(this.#lines.join(''));
    this.#lines = [];
    this.#bytes = 0;
  }
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    level: options.level ?? 'info',
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(settings, options.destination ?? new LogOutput(options.format));
}
