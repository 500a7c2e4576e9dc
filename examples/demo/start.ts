// `npm start`: the demo origin and one svc node in front of it, in one process, until Ctrl-C. The
// addresses come from SVC_LISTEN, SVC_ADMIN_LISTEN and DEMO_ORIGIN_PORT (defaults 127.0.0.1:8080,
// 127.0.0.1:9000 and 8081); a port that is taken is one line naming the variable to change.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, formatConfigIssue, loadConfigFile } from '../../src/config/index.js';
import { createLogger } from '../../src/observe/logger.js';
import { ListenError, startNode } from '../../src/node/svc-node.js';
import { startDemoOrigin } from './demo-origin.js';
import { demoAddresses, originListenFailure } from './demo-env.js';

// Compiled to dist/examples/demo/, so the package root is three levels up.
const configPath = fileURLToPath(new URL('../../../examples/single-node.yaml', import.meta.url));
/** Where the token is left for the README's commands (`export SVC_ADMIN_TOKEN="$(cat …)"`). */
const TOKEN_FILE = join('.svc-data', 'admin-token');

function fail(line: string, code = 1): never {
  console.error(`npm start: ${line}`);
  process.exit(code);
}

const addresses = demoAddresses(process.env);
if (typeof addresses === 'string') fail(addresses, 2);

const origin = await startDemoOrigin('127.0.0.1', addresses.originPort).catch((error: unknown) => fail(originListenFailure(addresses.originPort, error)));
const fileConfig = await loadConfigFile(configPath);
const config = {
  ...fileConfig,
  listen: addresses.listen,
  admin: { ...fileConfig.admin, listen: addresses.adminListen },
  pools: fileConfig.pools.map((pool) => ({ ...pool, upstreams: [origin.url] })),
};
const logger = createLogger({ format: process.stdout.isTTY ? 'pretty' : 'json' });
const node = await startNode({ config, logger }).catch(async (error: unknown) => {
  await origin.close();
  if (error instanceof ListenError) {
    const variable = error.message.includes('the admin listener') ? 'SVC_ADMIN_LISTEN' : 'SVC_LISTEN';
    fail(`${error.message}; set ${variable} to another address`);
  }
  if (error instanceof ConfigError) fail(error.issues.map(formatConfigIssue).join('; '));
  throw error;
});
await mkdir('.svc-data', { recursive: true });
await writeFile(TOKEN_FILE, `${node.adminToken.value}\n`, { mode: 0o600 });
await chmod(TOKEN_FILE, 0o600);

console.log(`
  svc is running in front of the demo origin (${origin.url}).

    data plane   ${node.dataUrl}        try: curl -i ${node.dataUrl}/hello   (twice: MISS, then HIT)
    threads      ${node.workers} serving the data plane, one cache (workers: 1 in examples/single-node.yaml for one)
    admin API    ${node.adminUrl}       try: curl '${node.adminUrl}/readyz?detail=1'
    admin token  ${node.adminToken.value}   (${node.adminToken.source === 'generated' ? 'generated for this run; set SVC_ADMIN_TOKEN to choose one' : `from ${node.adminToken.source}`})
                 also in ${TOKEN_FILE}: export SVC_ADMIN_TOKEN="$(cat ${TOKEN_FILE})"

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
