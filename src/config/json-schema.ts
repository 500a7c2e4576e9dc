// The JSON Schema of the configuration file, generated from the valibot schema so the two cannot
// drift. It describes what an operator writes (valibot's input side): durations are strings with a
// pattern, defaults are shown as written in a file.

import { toJsonSchema } from '@valibot/to-json-schema';
import { configSchema } from './schema.js';

export function configJsonSchema(): object {
  return toJsonSchema(configSchema, {
    // Input mode stops each pipeline before its transform (duration text to milliseconds).
    typeMode: 'input',
    overrideSchema: ({ valibotSchema, jsonSchema }) => {
      // A default computed when the file is loaded (cluster.node_name is the host name) would put
      // this machine's name into the schema; it is documented instead.
      if ('default' in valibotSchema && typeof valibotSchema.default === 'function') {
        const { default: _machineSpecific, ...rest } = jsonSchema;
        return rest;
      }
      return undefined;
    },
  });
}
