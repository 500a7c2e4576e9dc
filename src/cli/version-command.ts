// `svc version`: the version, commit and build date of this installation.
import { defineCommand } from 'citty';
import { buildInfo } from '../version/build-info.js';

export const versionCommand = defineCommand({
  meta: { name: 'version', description: 'print version' },
  args: { output: { type: 'string', description: 'text (default) or json', default: 'text' } },
  run({ args }) {
    const info = buildInfo();
    if (args.output === 'json') console.log(JSON.stringify(info));
    else console.log(`svc ${info.version} (commit ${info.commit.slice(0, 12)}, built ${info.date})`);
  },
});
