#!/usr/bin/env node
// The `svc` executable (package.json `bin`).
import { runCli } from './cli.js';

await runCli(process.argv.slice(2));
