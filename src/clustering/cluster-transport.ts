// The transport a clustered node talks over, with its security (issue 16, docs/security.md): the
// configured transport (UDP with its own mutual TLS and sealed packets when those are set, or libp2p
// with its allowlist), wrapped in the cluster library's sealed transport when `cluster.secret` is set,
// so the one secret protects packets, requests and peer fetch alike on either transport.
import { sealTransport, type RejectedPath, type Transport } from '../../cluster/index.js';
import { createUdpTransport, decodeGossipKeys, loadTlsMaterial, type UdpTransport } from '../../transports/udp/index.js';
import type { Config } from '../config/index.js';
import { missingLibp2pMessage, missingLibp2pPackages } from './libp2p-packages.js';

type ClusterConfig = NonNullable<Config['cluster']>;

export interface ClusterTransport {
  transport: Transport;
  /** How the traffic is authenticated, in words for the log and readiness; undefined when it is not. */
  authenticatedBy: string | undefined;
  /** Inputs refused for want of authentication, by path, as counted so far. */
  rejected(): Record<RejectedPath, number>;
}

/** The secrets of `cluster.secret`, primary first, as bytes. */
export function clusterSecrets(cluster: ClusterConfig): Buffer[] {
  const { secret } = cluster;
  if (secret === undefined) return [];
  return (Array.isArray(secret) ? secret : [secret]).map((text) => Buffer.from(text, 'base64'));
}

async function baseTransport(cluster: ClusterConfig, limits: Config['limits']): Promise<Transport> {
  if (cluster.transport === 'libp2p') {
    const missing = missingLibp2pPackages();
    if (missing.length > 0) throw new Error(`cluster.transport: ${missingLibp2pMessage(missing)}`);
    const { createLibp2pTransport } = await import('../../transports/libp2p/index.js');
    const libp2p = cluster.libp2p!;
    return createLibp2pTransport({
      dataDir: libp2p.data_dir,
      allowedPeerIds: libp2p.allowed_peer_ids,
      listen: cluster.bind,
      ...(cluster.advertise ? { advertise: cluster.advertise } : {}),
    });
  }
  return createUdpTransport({
    bind: cluster.bind,
    // The cluster listener is on the network too: the edge's header limits apply to it (issue 14).
    headersTimeoutMs: limits.header_timeout,
    maxHeaderBytes: limits.max_header_bytes,
    ...(cluster.advertise ? { advertise: cluster.advertise } : {}),
    ...(cluster.tls ? { tls: await loadTlsMaterial(cluster.tls) } : {}),
    ...(cluster.gossip_keys ? { gossipKeys: decodeGossipKeys(cluster.gossip_keys) } : {}),
  });
}

/** Builds the node's transport; `onRejected` hears of every unauthenticated input. */
export async function createClusterTransport(
  cluster: ClusterConfig,
  limits: Config['limits'],
  onRejected: (path: RejectedPath, from: string) => void,
): Promise<ClusterTransport> {
  const base = await baseTransport(cluster, limits);
  const secrets = clusterSecrets(cluster);
  // The UDP transport counts the datagrams its own gossip keys refused.
  const udp = cluster.transport === 'udp' ? (base as UdpTransport) : undefined;
  if (secrets.length > 0) {
    const sealed = sealTransport(base, { secrets, onRejected });
    return {
      transport: sealed,
      authenticatedBy: `cluster.secret (${secrets.length === 1 ? 'one secret' : `${secrets.length} secrets`}) on ${cluster.transport}`,
      rejected: () => {
        const counts = { ...sealed.counters().rejected };
        counts.packet += udp?.counters().packetsRejected ?? 0;
        return counts;
      },
    };
  }
  const udpPair = udp !== undefined && udp.security.packetsSealed && udp.security.requestsMutualTls;
  return {
    transport: base,
    authenticatedBy: udpPair ? 'cluster.tls and cluster.gossip_keys on udp' : undefined,
    rejected: () => ({ packet: udp?.counters().packetsRejected ?? 0, request: 0, answer: 0, broadcast: 0 }),
  };
}
