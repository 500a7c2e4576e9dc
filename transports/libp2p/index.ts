// The libp2p transport's public API. The polyfill comes first: libp2p needs Promise.withResolvers,
// which Node 20 lacks.
import './promise-with-resolvers.js';

export { createLibp2pTransport, Libp2pTransport } from './libp2p-transport.js';
export type { Libp2pTransportOptions } from './libp2p-transport.js';
export { loadOrCreateNodeKey, NODE_KEY_FILE_NAME } from './node-key.js';
export type { NodeKey } from './node-key.js';
export { parsePeerAddress } from './peer-address.js';
export { PACKET_PROTOCOL, REQUEST_PROTOCOL } from './wire.js';
export {
  FrameTooLargeError,
  InsecureKeyFileError,
  InvalidKeyFileError,
  InvalidPeerAddressError,
  PacketTooLargeError,
  TruncatedFrameError,
} from './errors.js';
