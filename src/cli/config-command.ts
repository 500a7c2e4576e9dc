// `svc config validate <file>` and `svc config schema` (spec §4.2). Mounted by the svc CLI.

import { defineCommand } from 'citty';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import { configJsonSchema } from '../config/json-schema.js';
import { loadConfigFile } from '../config/load.js';

const validateCommand = defineCommand({
  meta: { name: 'validate', description: 'Validate a configuration file and print every problem' },
  args: {
    file: { type: 'positional', required: true, description: 'configuration file (YAML or JSON)' },
  },
  async run({ args }) {
    try {
      await loadConfigFile(args.file);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) console.error(formatConfigIssue(issue));
      // exitCode rather than exit(): stderr is flushed before the process ends.
      process.exitCode = 1;
      return;
    }
    console.log(`ok: ${args.file}`);
  },
});

const schemaCommand = defineCommand({
  meta: { name: 'schema', description: 'Print the JSON Schema of the configuration file' },
  run() {
    console.log(JSON.stringify(configJsonSchema(), null, 2));
  },
});

export const configCommand = defineCommand({
  meta: { name: 'config', description: 'Validate a configuration file or print its schema' },
  subCommands: { validate: validateCommand, schema: schemaCommand },
});
