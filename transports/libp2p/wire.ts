// The libp2p protocols the transport speaks and the frames they carry (docs/libp2p.md, "Protocols").
//
//   /svc/packet/1.0.0   one stream per packet:  [sender address][packet bytes up to the end]
//   /svc/request/1.0.0  one stream per request: [sender address][channel][varint body length][body]
//                       answered by            [status u8][varint length][body or error message]
// Strings are a varint byte length and UTF-8. The sender address is the sender's own transport address;
// the receiver only believes it when its /p2p/ peer id is the one noise authenticated.
import { concatBytes, encodeString, encodeVarint } from './stream-io.js';

export const PACKET_PROTOCOL = '/svc/packet/1.0.0';
export const REQUEST_PROTOCOL = '/svc/request/1.0.0';

/** Response statuses. Anything but `ok` fails the caller's request with code `remote`. */
export const ResponseStatus = {
  ok: 0,
  handlerFailed: 1,
  noHandler: 2,
  tooLarge: 3,
} as const;
export type ResponseStatus = (typeof ResponseStatus)[keyof typeof ResponseStatus];

/** Longest sender address accepted: a multiaddr with a DNS name and a peer id fits with room to spare. */
export const MAX_ADDRESS_BYTES = 1024;
/** Longest channel name accepted; the cluster's are a few dozen bytes. */
export const MAX_CHANNEL_BYTES = 256;
/** Longest error message sent back; the rest of a handler's message stays with the peer. */
export const MAX_ERROR_MESSAGE_BYTES = 1024;

export function encodePacketFrame(sender: string, packet: Uint8Array): Uint8Array {
  return concatBytes([...encodeString(sender), packet]);
}

export function encodeRequestHeader(sender: string, channel: string, bodyBytes: number): Uint8Array {
  return concatBytes([...encodeString(sender), ...encodeString(channel), encodeVarint(bodyBytes)]);
}

export function encodeResponseHeader(status: ResponseStatus, bodyBytes: number): Uint8Array {
  return concatBytes([Uint8Array.of(status), encodeVarint(bodyBytes)]);
}

/** An error message cut to MAX_ERROR_MESSAGE_BYTES. */
export function encodeErrorMessage(message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message);
  return bytes.length <= MAX_ERROR_MESSAGE_BYTES ? bytes : bytes.subarray(0, MAX_ERROR_MESSAGE_BYTES);
}

/** True when `address` names `peerId` as its final /p2p/ component. */
export function addressBelongsTo(address: string, peerId: string): boolean {
  return address.endsWith(`/p2p/${peerId}`);
}
