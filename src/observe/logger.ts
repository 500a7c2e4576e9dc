// The process logger: pino, one JSON object per line on standard output, with `time` as an ISO 8601
// UTC string and `level` as its name (spec §2.4). Writes go through an asynchronous destination so
// that logging never blocks a request; `pretty` is for a person at a terminal.
import { pino, type Logger, type DestinationStream } from 'pino';

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  format?: LogFormat;
  level?: string;
  /** Where lines go; standard output by default. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

export type { Logger };

export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    level: options.level ?? 'info',
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (options.destination) return pino(settings, options.destination);
  if (options.format === 'pretty') {
    return pino({ ...settings, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard' } } });
  }
  // sync:false hands writes to the event loop instead of blocking a request; lines logged while a
  // write is under way are batched into the next one. Nothing waits for a buffer to fill, so a line
  // is never held back (and lost to a kill -9) for want of company.
  return pino(settings, pino.destination({ dest: 1, sync: false }));
}
