// The CDN API token (spec §2.3, §5 item 6): `cdn.api_token`, or when that is empty the
// `CDN_API_TOKEN` environment variable, read once at startup. Neither is ever echoed: a message about
// a bad token says what is wrong with it, never what it is.
import { CDN_API_TOKEN_PATTERN } from '../config/index.js';
import { CdnError } from './errors.js';

export const CDN_TOKEN_ENV = 'CDN_API_TOKEN';

export function resolveCdnToken(configured: string, env: NodeJS.ProcessEnv): string {
  if (configured !== '') return configured;
  const fromEnv = env[CDN_TOKEN_ENV] ?? '';
  if (fromEnv === '') {
    throw new CdnError('no_token', `the cdn block is configured but cdn.api_token is empty and ${CDN_TOKEN_ENV} is not set`);
  }
  if (!CDN_API_TOKEN_PATTERN.test(fromEnv)) {
    throw new CdnError('invalid_token', `${CDN_TOKEN_ENV} must hold visible ASCII characters only (a string of ${fromEnv.length} characters with others)`);
  }
  return fromEnv;
}
