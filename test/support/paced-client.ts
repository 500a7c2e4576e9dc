// A client that reads its answer at a chosen pace over a raw socket: a modem-speed reader, or one that
// stops reading altogether. Between reads the socket is paused, so what it does not read stays in the
// kernel and TCP pushes back on the server as a slow client's connection does.
import { connect, type Socket } from 'node:net';

export interface PacedGet {
  /** The status line and header fields, once they arrived. */
  readonly head: Promise<string>;
  /** Resolves when the server closed or cut the connection. */
  readonly closed: Promise<void>;
  /** Body bytes read so far. */
  received(): number;
  /** Reads the rest as fast as it comes (what the kernel still holds, then the end). */
  drain(): void;
  destroy(): void;
}

/** GETs `url` and reads the answer at `bytesPerSecond` (0: reads the head, then nothing). */
export function pacedGet(url: string, bytesPerSecond: number): PacedGet {
  const { hostname, port, pathname, search } = new URL(url);
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  socket.write(`GET ${pathname}${search} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n\r\n`);
  let buffered = Buffer.alloc(0);
  let headDone = false;
  let bodyBytes = 0;
  let resolveHead!: (head: string) => void;
  const head = new Promise<string>((resolve) => (resolveHead = resolve));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // A cut connection may end in a reset; the test looks at what arrived, not at how it ended.
  socket.on('error', () => undefined);

  const tickMs = 100;
  const perTick = Math.round((bytesPerSecond * tickMs) / 1000);
  const take = (chunk: Buffer): void => {
    if (headDone) {
      bodyBytes += chunk.length;
      return;
    }
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0) return;
    headDone = true;
    resolveHead(buffered.subarray(0, end).toString('latin1'));
    bodyBytes += buffered.length - end - 4;
  };
  // Reads while the budget lasts, then stops until the next tick refills it: `bytesPerSecond` on
  // average, one socket read (up to 64 KiB) at a time. The head is read whatever the budget.
  let budget = 0;
  socket.on('data', (chunk: Buffer) => {
    take(chunk);
    if (headDone) budget -= chunk.length;
    if (headDone && budget <= 0) socket.pause();
  });
  const timer = setInterval(() => {
    budget = Math.min(budget + perTick, perTick);
    if (!headDone || budget > 0) socket.resume();
  }, tickMs);
  socket.resume();
  // The pace is the test's business, never a reason to keep the process alive.
  timer.unref();
  void closed.then(() => clearInterval(timer));
  return {
    head,
    closed,
    received: () => bodyBytes,
    drain: () => {
      clearInterval(timer);
      budget = Infinity;
      socket.resume();
    },
    destroy: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}
