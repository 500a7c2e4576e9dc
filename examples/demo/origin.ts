// `npm run demo-origin`: the demo origin alone, for running svc on your own configuration
// (examples/single-node.yaml forwards to it), until Ctrl-C. Its port is DEMO_ORIGIN_PORT (8081).
import { startDemoOrigin } from './demo-origin.js';
import { demoAddresses, originListenFailure } from './demo-env.js';

const addresses = demoAddresses(process.env);
if (typeof addresses === 'string') {
  console.error(`demo-origin: ${addresses}`);
  process.exit(2);
}
try {
  const origin = await startDemoOrigin('127.0.0.1', addresses.originPort);
  console.log(`demo origin on ${origin.url} (Ctrl-C stops it)`);
  const stop = (): void => void origin.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  console.error(`demo-origin: ${originListenFailure(addresses.originPort, error)}`);
  process.exit(1);
}
