// The admin bearer token (spec §5.2): `SVC_ADMIN_TOKEN`, else `admin.token`, else a random token that
// the caller logs once at WARN so an operator can find it. The token itself is never logged anywhere
// else, never put in an error message and never in a metric.
import { randomBytes } from 'node:crypto';
import { ConfigError, type ConfigIssue } from '../config/index.js';
import { describeSecret } from '../config/messages.js';
import { ADMIN_TOKEN_MIN_LENGTH } from '../config/schema.js';

export type AdminTokenSource = 'env' | 'config' | 'generated';

export interface AdminToken {
  value: string;
  source: AdminTokenSource;
}

/** SVC_ADMIN_TOKEN obeys the rule of `admin.token`: a short bearer token can be guessed. */
export function adminTokenEnvIssue(env: NodeJS.ProcessEnv): ConfigIssue | undefined {
  const fromEnv = env.SVC_ADMIN_TOKEN;
  if (fromEnv === undefined || fromEnv === '' || fromEnv.length >= ADMIN_TOKEN_MIN_LENGTH) return undefined;
  return {
    path: 'SVC_ADMIN_TOKEN',
    message: `expected a string of at least ${ADMIN_TOKEN_MIN_LENGTH} characters (the rule of admin.token), got ${describeSecret(fromEnv)}`,
  };
}

/** The token in use; throws ConfigError when SVC_ADMIN_TOKEN breaks the rule of `admin.token`. */
export function resolveAdminToken(env: NodeJS.ProcessEnv, configured: string | undefined): AdminToken {
  const issue = adminTokenEnvIssue(env);
  if (issue) throw new ConfigError([issue]);
  const fromEnv = env.SVC_ADMIN_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: 'env' };
  if (configured !== undefined && configured !== '') return { value: configured, source: 'config' };
  // 32 random bytes: as strong as any token an operator would configure.
  return { value: randomBytes(32).toString('base64url'), source: 'generated' };
}
