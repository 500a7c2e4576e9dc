// TLS on one of a thread's listeners: the options its server is made with (versions, ALPN, the
// handshake's time limit, the certificate SNI picks), and a new set of certificates taken while it
// serves. A reload replaces the secure contexts of every server attached: connections open keep the
// certificate they were made with, new ones get the new one, none is dropped (tls.Server's
// setSecureContext). Each thread builds its own from the PEM text the main thread read
// (listener-certificates.ts).
import type { Server as TlsServer, TLSSocket, TlsOptions, SecureContext } from 'node:tls';
import { createSecureContext } from 'node:tls';
import type { ListenerCertificate } from './listener-certificates.js';
import { noteTlsFields } from './tls-fields.js';

/**
 * The protocols ALPN offers on the data plane, the server's preference first: HTTP/2 (RFC 9113 §3.2),
 * then HTTP/1.1 for clients without it.
 */
export const ALPN_PROTOCOLS: readonly string[] = ['h2', 'http/1.1'];

/** What a listener that speaks HTTP/1.1 only offers (the admin API): a client never picks `h2` there. */
export const HTTP1_ALPN_PROTOCOLS: readonly string[] = ['http/1.1'];

/** TLS 1.2 and 1.3 only: 1.0 and 1.1 are deprecated (RFC 8996), and every current client has 1.2. */
export const MIN_TLS_VERSION = 'TLSv1.2';

/** What a secure context is made of: the same for the default one and for those SNI picks. */
function contextOptions(certificate: ListenerCertificate): TlsOptions {
  return { cert: certificate.cert, key: certificate.key, minVersion: MIN_TLS_VERSION };
}

/** Secure contexts by the name SNI asks for: exact names, and `*.rest` for one label of a wildcard. */
function contextsByName(certificates: readonly ListenerCertificate[]): Map<string, SecureContext> {
  const contexts = new Map<string, SecureContext>();
  for (const certificate of certificates) {
    const context = createSecureContext(contextOptions(certificate));
    // The first certificate listed for a name is the one served for it: the operator's order decides.
    for (const name of certificate.names) if (!contexts.has(name)) contexts.set(name, context);
  }
  return contexts;
}

export class TlsTermination {
  #default: TlsOptions;
  #byName: Map<string, SecureContext>;
  readonly #servers = new Set<TlsServer>();

  /**
   * `certificates`: at least one; the first is served to a client that names none of theirs (or no
   * name at all, as when it connects to an IP address). `handshakeTimeoutMs`: a client that has not
   * finished its handshake by then is cut (Node's default is 2 minutes, a slowloris's gift).
   */
  constructor(
    certificates: readonly ListenerCertificate[],
    private readonly handshakeTimeoutMs: number,
  ) {
    this.#default = contextOptions(certificates[0]!);
    this.#byName = contextsByName(certificates);
  }

  /** The TLS part of a server's options, offering `protocols` by ALPN. */
  serverOptions(protocols: readonly string[]): TlsOptions {
    return {
      ...this.#default,
      ALPNProtocols: [...protocols],
      handshakeTimeout: this.handshakeTimeoutMs,
      SNICallback: (servername, callback) => callback(null, this.contextFor(servername)),
    };
  }

  /** The context for a name a client asked for; undefined leaves it the default one. */
  contextFor(servername: string): SecureContext | undefined {
    const name = servername.toLowerCase();
    const exact = this.#byName.get(name);
    if (exact !== undefined) return exact;
    const dot = name.indexOf('.');
    return dot > 0 ? this.#byName.get(`*${name.slice(dot)}`) : undefined;
  }

  /** A server made with serverOptions(): it gets every replacement, and notes each connection's TLS. */
  attach(server: TlsServer): void {
    this.#servers.add(server);
    server.on('secureConnection', (socket: TLSSocket) => noteTlsFields(socket));
    server.once('close', () => this.#servers.delete(server));
  }

  /** New certificates for new connections, on every attached server; those open keep theirs. */
  replace(certificates: readonly ListenerCertificate[]): void {
    this.#default = contextOptions(certificates[0]!);
    this.#byName = contextsByName(certificates);
    for (const server of this.#servers) server.setSecureContext(this.#default);
  }
}
