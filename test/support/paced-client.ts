// A client that reads its answer at a chosen pace over a raw socket: a modem-speed reader, or one that
// stops reading altogether. The socket is left paused, so what it does not read stays in the kernel
// and TCP pushes back on the server as a slow client's connection does.
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
  socket.pause();
  let buffered = Buffer.alloc(0);
  let headDone = false;
  let bodyBytes = 0;
  let resolveHead!: (head: string) => void;
  const head = new Promise<string>((resolve) => (resolveHead = resolve));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // A cut connection may end in a reset; the test looks at what arrived, not at how it ended.
  socket.on('error', () => undefined);

  const tickMs = 100;
  const read = (limit: number): void => {
    const available = socket.readableLength;
    if (available === 0) {
      socket.read(0);
      return;
    }
    const chunk = socket.read(Math.min(limit, available)) as Buffer | null;
    if (chunk !== null) take(chunk);
  };
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
  // The head is read as soon as it comes; the body at the chosen pace.
  const timer = setInterval(() => {
    if (!headDone) read(64 * 1024);
    else if (bytesPerSecond > 0) read(Math.max(1, Math.round((bytesPerSecond * tickMs) / 1000)));
  }, tickMs);
  void closed.then(() => clearInterval(timer));
  return {
    head,
    closed,
    received: () => bodyBytes,
    drain: () => {
      clearInterval(timer);
      socket.on('data', take);
      socket.resume();
    },
    destroy: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}
