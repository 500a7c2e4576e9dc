// The admin bearer token (spec §5.2): `SVC_ADMIN_TOKEN`, else `admin.token`, else a random token that
// the caller logs once at WARN so an operator can find it. The token itself is never logged anywhere
// else, never put in an error message and never in a metric.
import { randomBytes } from 'node:crypto';

export type AdminTokenSource = 'env' | 'config' | 'generated';

export interface AdminToken {
  value: string;
  source: AdminTokenSource;
}

export function resolveAdminToken(env: NodeJS.ProcessEnv, configured: string | undefined): AdminToken {
  const fromEnv = env.SVC_ADMIN_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: 'env' };
  if (configured !== undefined && configured !== '') return { value: configured, source: 'config' };
  // 32 random bytes: as strong as any token an operator would configure.
  return { value: randomBytes(32).toString('base64url'), source: 'generated' };
}
