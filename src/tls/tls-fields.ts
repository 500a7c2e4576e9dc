// What the access log records of a connection's TLS: its version, cipher and ALPN protocol, in the
// access record's style. They are read once, when the handshake completes, and kept with the socket:
// a record written after the client went away still has them (a destroyed socket has no handle to
// ask), and a request costs nothing for them until it is logged.
import type { TLSSocket } from 'node:tls';

/** The TLS fields of an access record. */
export interface TlsFields {
  /** `TLSv1.3`, `TLSv1.2`. */
  readonly tls_version: string;
  /** The IANA name, `TLS_AES_128_GCM_SHA256`. */
  readonly tls_cipher: string;
  /** The protocol ALPN agreed on (`http/1.1`), '' when the client offered none. */
  readonly tls_alpn: string;
}

const fieldsOf = new WeakMap<object, TlsFields>();

/** Called once a connection's handshake completed. */
export function noteTlsFields(socket: TLSSocket): void {
  fieldsOf.set(socket, {
    tls_version: socket.getProtocol() ?? '',
    tls_cipher: socket.getCipher()?.standardName ?? '',
    tls_alpn: socket.alpnProtocol === false ? '' : (socket.alpnProtocol ?? ''),
  });
}

/** Whether a TLS connection completed its handshake (its fields were noted); false for plain HTTP too. */
export function handshakeCompleted(socket: object): boolean {
  return fieldsOf.has(socket);
}

/** The TLS fields of a client's connection; undefined for plain HTTP. */
export function tlsFieldsOf(socket: object | null | undefined): TlsFields | undefined {
  return socket ? fieldsOf.get(socket) : undefined;
}
