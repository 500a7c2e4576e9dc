// `npm start`: the demo origin and one svc node in front of it, in one process, until Ctrl-C.
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../src/config/index.js';
import { createLogger } from '../../src/observe/logger.js';
import { startNode } from '../../src/node/svc-node.js';
import { startDemoOrigin } from './demo-origin.js';

// Compiled to dist/examples/demo/, so the package root is three levels up.
const configPath = fileURLToPath(new URL('../../../examples/single-node.yaml', import.meta.url));

const origin = await startDemoOrigin('127.0.0.1', 8081);
const config = await loadConfigFile(configPath);
const logger = createLogger({ format: process.stdout.isTTY ? 'pretty' : 'json' });
const node = await startNode({ config, logger });

console.log(`
  svc is running in front of the demo origin (${origin.url}).

    data plane   ${node.dataUrl}        try: curl -i ${node.dataUrl}/hello   (twice: MISS, then HIT)
    admin API    ${node.adminUrl}       try: curl ${node.adminUrl}/readyz?detail=1
    admin token  ${node.adminToken.value}   (${node.adminToken.source === 'generated' ? 'generated for this run; set SVC_ADMIN_TOKEN to choose one' : `from ${node.adminToken.source}`})

  Ctrl-C stops both.
`);

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await node.stop();
  await origin.close();
  logger.flush();
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
