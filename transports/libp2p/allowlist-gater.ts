// Access control: only peers whose peer id is on the allowlist are kept. Noise proves the remote's
// peer id during the handshake, so the check runs on the encrypted connection, before the muxer is set
// up and before any protocol handler can see a byte; the dial side checks too, so this node never sends
// cluster traffic to a stranger who happens to listen at a member's address.
import type { ConnectionGater, PeerId } from '@libp2p/interface';

export function allowlistGater(allowedPeerIds: ReadonlySet<string>): ConnectionGater {
  const denied = (peerId: PeerId): boolean => !allowedPeerIds.has(peerId.toString());
  return {
    denyDialPeer: denied,
    denyInboundEncryptedConnection: denied,
    denyOutboundEncryptedConnection: denied,
  };
}
