// `svc undrain`: puts a drained node back in service (POST /v1/undrain): `/readyz` is ready again once
// its conditions hold, and responses offer keep-alive again. On a node that serves it changes nothing.
// Draining itself needs no command: `GET /drain` takes no token, so a pre-stop hook's `curl` does it.
import { defineCommand } from 'citty';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';

export const undrainCommand = defineCommand({
  meta: { name: 'undrain', description: 'put a drained node back in service (POST /v1/undrain)' },
  args: { ...adminClientArgs },
  async run({ args }) {
    const client = clientFromFlags(args);
    const body = await callApi('undrain', () => client.undrain());
    printAnswer(args.output, body, 'serving');
  },
});
