// The namespace side of socket-forwarder.ts, run inside a network namespace by a test
// (`ip netns exec <ns> node dist/test/support/netns-relay.js '<forwards as JSON>'`): it forwards each
// `{from, to}` pair, writes `ready` on stdout once every one listens, and exits when its stdin ends, so it
// never outlives the test that started it.
import { forwardConnections, type Endpoint } from './socket-forwarder.js';

export interface RelayForward {
  from: Endpoint;
  to: Endpoint;
}

const forwards = JSON.parse(process.argv[2] ?? '[]') as RelayForward[];
await Promise.all(forwards.map(({ from, to }) => forwardConnections(from, to)));
process.stdout.write('ready\n');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
