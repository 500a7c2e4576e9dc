// A small HTTP/2 frame writer and reader for tests that must send what no HTTP/2 client library
// sends: malformed requests, floods of resets and CONTINUATION frames (RFC 9113 §4.1: a 9-byte frame
// header, then the payload). Header blocks are HPACK literals without indexing and without Huffman
// coding (RFC 7541 §6.2.2): every name and value as its own bytes, which any decoder reads.
import { once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';

/** What every HTTP/2 client sends first (RFC 9113 §3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

/** RFC 9113 §7 error codes used here. */
export const ErrorCode = { NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, REFUSED_STREAM: 7, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with a 7-bit prefix (RFC 7541 §5.1), the prefix's other bit 0 (no Huffman). */
function hpackLength(length: number): Buffer {
  if (length < 127) return Buffer.from([length]);
  const bytes = [127];
  let rest = length - 127;
  while (rest >= 128) {
    bytes.push((rest & 127) | 128);
    rest >>= 7;
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header block of literal fields without indexing, new names (RFC 7541 §6.2.2, first byte 0). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    fields.flatMap(([name, value]) => [Buffer.from([0]), hpackLength(Buffer.byteLength(name)), Buffer.from(name), hpackLength(Buffer.byteLength(value)), Buffer.from(value)]),
  );
}

export function headersFrame(streamId: number, fields: readonly (readonly [string, string])[], options: { endStream?: boolean; endHeaders?: boolean } = {}): Buffer {
  const flags = (options.endStream ?? true ? END_STREAM : 0) | (options.endHeaders ?? true ? END_HEADERS : 0);
  return frame(FrameType.HEADERS, flags, streamId, headerBlock(fields));
}

/** The largest frame payload a peer must accept before SETTINGS say more (RFC 9113 §4.2). */
export const MAX_FRAME_SIZE = 16_384;

/** A HEADERS frame and as many CONTINUATION frames as its block needs, the last one ending it. */
export function headersFrames(streamId: number, fields: readonly (readonly [string, string])[]): Buffer {
  const block = headerBlock(fields);
  const parts: Buffer[] = [];
  for (let start = 0; start < block.length; start += MAX_FRAME_SIZE) parts.push(block.subarray(start, start + MAX_FRAME_SIZE));
  return Buffer.concat(
    parts.map((part, index) => {
      const last = index === parts.length - 1 ? END_HEADERS : 0;
      return index === 0 ? frame(FrameType.HEADERS, END_STREAM | last, streamId, part) : frame(FrameType.CONTINUATION, last, streamId, part);
    }),
  );
}

export function continuationFrame(streamId: number, block: Buffer, endHeaders = false): Buffer {
  return frame(FrameType.CONTINUATION, endHeaders ? END_HEADERS : 0, streamId, block);
}

export function dataFrame(streamId: number, data: string | Buffer, endStream = true): Buffer {
  return frame(FrameType.DATA, endStream ? END_STREAM : 0, streamId, Buffer.from(data));
}

export function rstStreamFrame(streamId: number, code: number = ErrorCode.CANCEL): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function settingsFrame(ack = false): Buffer {
  return frame(FrameType.SETTINGS, ack ? ACK : 0, 0);
}

/** The request pseudo-headers of a GET for `path` at `authority` over https. */
export function requestFields(method: string, path: string, authority: string): [string, string][] {
  return [
    [':method', method],
    [':scheme', 'https'],
    [':path', path],
    [':authority', authority],
  ];
}

export interface ReceivedFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** The error code of a RST_STREAM or GOAWAY frame. */
export function errorCodeOf(received: ReceivedFrame): number | undefined {
  if (received.type === FrameType.RST_STREAM) return received.payload.readUInt32BE(0);
  if (received.type === FrameType.GOAWAY) return received.payload.readUInt32BE(4);
  return undefined;
}

/**
 * A raw HTTP/2 connection over TLS (ALPN `h2`): it sends the preface and an empty SETTINGS, acknowledges
 * the server's, and gathers every frame the server sends until it closes.
 */
export class RawH2Connection {
  readonly frames: ReceivedFrame[] = [];
  #pending = Buffer.alloc(0);
  #closed: Promise<void>;

  private constructor(readonly socket: TLSSocket) {
    this.#closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
  }

  static async open(port: number, ca: string): Promise<RawH2Connection> {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ALPNProtocols: ['h2'] });
    await once(socket, 'secureConnect');
    if (socket.alpnProtocol !== 'h2') throw new Error(`ALPN chose ${String(socket.alpnProtocol)}, not h2`);
    const connection = new RawH2Connection(socket);
    socket.write(Buffer.concat([CLIENT_PREFACE, settingsFrame()]));
    return connection;
  }

  /** Writes frames while the connection takes them; false once the server has closed it. */
  send(...frames: Buffer[]): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    this.socket.write(Buffer.concat(frames));
    return true;
  }

  get closed(): boolean {
    return this.socket.destroyed;
  }

  /** Resolves when the server closed the connection. */
  whenClosed(): Promise<void> {
    return this.#closed;
  }

  close(): void {
    this.socket.destroy();
  }

  /** The frames of `type` received so far. */
  framesOf(type: number): ReceivedFrame[] {
    return this.frames.filter((received) => received.type === type);
  }

  #read(chunk: Buffer): void {
    let buffer = Buffer.concat([this.#pending, chunk]);
    while (buffer.length >= 9) {
      const length = buffer.readUIntBE(0, 3);
      if (buffer.length < 9 + length) break;
      const received = { type: buffer[3]!, flags: buffer[4]!, streamId: buffer.readUInt32BE(5) & 0x7fffffff, payload: buffer.subarray(9, 9 + length) };
      this.frames.push(received);
      if (received.type === FrameType.SETTINGS && (received.flags & ACK) === 0) this.send(settingsFrame(true));
      buffer = buffer.subarray(9 + length);
    }
    this.#pending = Buffer.from(buffer);
  }
}
