// The running configuration as `GET /v1/config` shows it: secrets replaced, everything else as
// loaded. File paths (cluster.tls.key included) stay: they name where a secret is, not the secret.

import type { Config } from './schema.js';

export const REDACTED = '[redacted]';

/** A copy of `config` with every secret that is set replaced by "[redacted]". */
export function redactConfig(config: Config): unknown {
  const copy = structuredClone(config);
  if (copy.admin.token !== undefined && copy.admin.token !== '') copy.admin.token = REDACTED;
  if (copy.cdn !== undefined && copy.cdn.api_token !== '') copy.cdn.api_token = REDACTED;
  // Gossip keys seal cluster packets: how many there are is useful, their bytes never are.
  if (copy.cluster?.gossip_keys !== undefined) copy.cluster.gossip_keys = copy.cluster.gossip_keys.map(() => REDACTED);
  const secret = copy.cluster?.secret;
  if (copy.cluster !== undefined && secret !== undefined) copy.cluster.secret = Array.isArray(secret) ? secret.map(() => REDACTED) : REDACTED;
  return copy;
}
