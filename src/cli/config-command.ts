// `svc config validate <file>` and `svc config schema` (spec §4.2). Mounted by the svc CLI.

import { defineCommand } from 'citty';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import { configJsonSchema } from '../config/json-schema.js';
import { loadConfigFile } from '../config/load.js';
import { checkStartup } from '../node/startup-checks.js';

const validateCommand = defineCommand({
  meta: { name: 'validate', description: 'Validate a configuration file and the files and directories it names; print every problem' },
  args: {
    file: { type: 'positional', required: true, description: 'configuration file (YAML or JSON)' },
  },
  async run({ args }) {
    let issues;
    try {
      // The same checks as `svc serve` at startup, with this environment (SVC_ADMIN_TOKEN included).
      issues = await checkStartup(await loadConfigFile(args.file), process.env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues = error.issues;
    }
    if (issues.length > 0) {
      for (const issue of issues) console.error(formatConfigIssue(issue));
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
