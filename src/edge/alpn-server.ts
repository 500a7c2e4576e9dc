// An HTTPS listener that serves each connection in the protocol its client chose by ALPN: HTTP/1.1 on
// Node's own path (the https server's parser, under the door, limits and timeouts edge-server.ts
// sets), HTTP/2 through Http2Sessions. Node's https.Server is a tls.Server whose secure connections
// all go to its HTTP/1.1 connection listener; here that listener is put behind a switch on the
// connection's `alpnProtocol`, as Node's own http2 server does for its `allowHTTP1`. Closing the
// server closes its HTTP/2 sessions as it closes its HTTP/1.1 connections.
import { Server as HttpsServer, type ServerOptions } from 'node:https';
import type { RequestListener } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Http2Sessions } from './http2-sessions.js';

export class AlpnServer extends HttpsServer {
  readonly #http2: Http2Sessions;

  constructor(options: ServerOptions, listener: RequestListener, http2: Http2Sessions) {
    super(options, listener);
    this.#http2 = http2;
    // tls.Server registers the listener it is made with (https's HTTP/1.1 one) on 'secureConnection',
    // first and alone: it is taken off and called for the connections that did not choose h2.
    const [http1] = this.listeners('secureConnection') as ((socket: TLSSocket) => void)[];
    this.removeListener('secureConnection', http1!);
    this.on('secureConnection', (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') http2.serve(socket);
      else http1!.call(this, socket);
    });
  }

  /** Stops listening; HTTP/2 sessions get GOAWAY and finish their open streams, as busy HTTP/1.1 connections finish theirs. */
  override close(callback?: (error?: Error) => void): this {
    this.#http2.closeGracefully();
    return super.close(callback);
  }

  override closeIdleConnections(): void {
    super.closeIdleConnections();
    this.#http2.closeIdle();
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    this.#http2.closeAll();
  }
}
