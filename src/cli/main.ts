#!/usr/bin/env node
// The `svc` executable (package.json `bin`). The Node floor is checked before anything else loads:
// an older Node would fail later with a less useful error (a native addon built for another Node).
import module from 'node:module';
import { meetsNodeFloor, nodeFloorMessage } from '../runtime/node-floor.js';

if (!meetsNodeFloor(process.version)) {
  console.error(nodeFloorMessage(process.version));
  process.exit(1);
}
// svc's modules compile once per machine, not on every start (NODE_DISABLE_COMPILE_CACHE=1 turns it off).
module.enableCompileCache();
const { runCli } = await import('./cli.js');
await runCli(process.argv.slice(2));
