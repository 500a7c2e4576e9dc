// Puts a RequestHeadMeter on every connection of a listener clients reach, ahead of Node's parser.
// A 'data' listener of its own makes Node's server pass each chunk through JavaScript (it otherwise
// feeds its parser inside C++); prepended, it reads each chunk first. The parser then reads the same
// chunk and reports, in order, the requests whose heads came in it: those the door let through are
// answered as usual, the refused one and anything after it are not. The refusal itself is answered
// once the parser is done with the chunk, so that the requests before it are answered first, and
// only if the parser did not fail earlier in the bytes (then its error is the one answered).
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer, type TLSSocket } from 'node:tls';
import { RequestHeadMeter, type HeadLimits, type HeadRefusal } from './request-head-meter.js';

export interface Door {
  /**
   * Called for each request the parser reports, in order: true when the door let that head through.
   * False for a head it refused, and for one it never found where the parser did: the two read the
   * framing differently, which is what request smuggling is made of.
   */
  admits(request: IncomingMessage): boolean;
  /** True once the door refused a head on this connection, whoever answers it. */
  refused(socket: object): boolean;
  /**
   * Called when the parser fails on a connection, `failedAt` bytes into the chunk it was reading:
   * true when the door refused a head there or before and answers it; false when the parser failed
   * earlier in those bytes (on a head or body before the refused one), whose error is then answered.
   */
  answersParseError(socket: object, failedAt: number | undefined): boolean;
}

export function openDoor(server: Server, limits: HeadLimits, refuse: (socket: Socket, refusal: HeadRefusal) => void): Door {
  const meters = new WeakMap<object, RequestHeadMeter>();
  /** Each connection's refusal, while it waits for the parser's turn to end; `undefined` once dropped. */
  const refusals = new WeakMap<object, HeadRefusal | undefined>();
  // Over TLS, the parser reads each connection's decrypted stream, which 'secureConnection' gives.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    // A connection whose client chose HTTP/2 by ALPN carries frames, not HTTP/1.1 heads: nghttp2 and
    // the session's limits bound it (http2-sessions.ts).
    if ((socket as TLSSocket).alpnProtocol === 'h2') return;
    const meter = new RequestHeadMeter(limits);
    meters.set(socket, meter);
    socket.prependListener('data', (chunk: Buffer) => {
      const refusal = meter.read(chunk);
      if (refusal === undefined) return;
      refusals.set(socket, refusal);
      process.nextTick(() => {
        if (refusals.get(socket) === refusal) refuse(socket, refusal);
      });
    });
  });
  return {
    admits(request) {
      const head = meters.get(request.socket)?.nextAdmitted();
      return head !== undefined && head.method === request.method && head.target === request.url;
    },
    refused: (socket) => refusals.has(socket),
    answersParseError(socket, failedAt) {
      const refusal = refusals.get(socket);
      if (refusal === undefined) return false;
      if (failedAt !== undefined && failedAt < refusal.startsAt) {
        refusals.set(socket, undefined);
        return false;
      }
      return true;
    },
  };
}
