// `svc reload`: asks a node to read its configuration file again (POST /v1/reload), as SIGHUP does,
// and says what changed. A refusal (invalid file, or a change that needs a restart) exits 1 with the
// node's reason; the node keeps running on the configuration it had.
import { defineCommand } from 'citty';
import { adminClientArgs, callApi, clientFromFlags, printAnswer } from './admin-client-args.js';

export const reloadCommand = defineCommand({
  meta: { name: 'reload', description: 'reload the configuration of a running node without a restart' },
  args: { ...adminClientArgs },
  async run({ args }) {
    const client = clientFromFlags(args);
    const body = await callApi('reload', () => client.reload());
    printAnswer(args.output, body, body.status === 'unchanged' ? 'reloaded: nothing changed' : `reloaded: ${body.changed.join(', ')}`);
  },
});
