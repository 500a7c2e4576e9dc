// The public API of the UDP transport (the default `cluster.transport: udp`).
export {
  createUdpTransport,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_CONNECTIONS_PER_PEER,
  DEFAULT_IDLE_POOL_TIMEOUT_MS,
  DEFAULT_MAX_DATAGRAM_BYTES,
  DEFAULT_MAX_REQUEST_BODY_BYTES,
  DEFAULT_MAX_RESPONSE_BODY_BYTES,
  UdpTransport,
} from './udp-transport.js';
export type { UdpTransportCounters, UdpTransportOptions, UdpTransportSecurity } from './udp-transport.js';
export { decodeGossipKeys, PacketKeyring, SEAL_OVERHEAD_BYTES } from './packet-keyring.js';
export { loadTlsMaterial } from './tls-material.js';
export type { TlsFiles, TlsMaterial } from './tls-material.js';
export { isAuthorizedTlsPeer } from './peer-server.js';
export type { PeerRequestListener } from './peer-server.js';
export { channelPath, FROM_HEADER, PEER_PATH_PREFIX } from './peer-paths.js';
export { formatAddress, parseAddress } from './address.js';
export { InvalidAddressError, InvalidGossipKeyError, PacketTooLargeError, TransportLifecycleError } from './errors.js';
export { BodyTooLargeError, TruncatedBodyError } from '../shared/read-body.js';
