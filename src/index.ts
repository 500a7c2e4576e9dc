// The package's main entry (`import … from 'svc-edge-cache'`): the typed admin API client and the
// wire types it shares with the server and the CLI (spec §9). The cluster library and its transports
// are entries of their own: `svc-edge-cache/cluster`, `svc-edge-cache/transports/udp`,
// `svc-edge-cache/transports/libp2p`.
export * from './client/index.js';
export * from './api/index.js';
