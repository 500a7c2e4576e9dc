// The UDP transport against the shared conformance suite, in the clear and with mutual TLS plus
// sealed packets (the 50 MiB peer-fetch case runs once, in the clear).
import { transportConformance } from './conformance.js';
import { clusterTls, TEST_GOSSIP_KEYS, udpConformanceFactory } from './support/udp-network.js';

transportConformance('udp (plain)', udpConformanceFactory({}, 50 * 1024 * 1024));
transportConformance('udp (mutual TLS, sealed packets)', udpConformanceFactory({ tls: clusterTls(), gossipKeys: [TEST_GOSSIP_KEYS[0]] }));
