// `POST /v1/reload` (token): re-reads the configuration file the node was started with and applies
// it as SIGHUP does (docs/operations.md "Reload"). The answer says what changed; a configuration that
// is invalid (422 `invalid_config`) or changes what needs a restart (409 `restart_required`) leaves
// the node as it was, and the message says why.
import type { ReloadResponse } from '../api/responses.js';
import { ConfigError, formatConfigIssue, ReloadRefusedError } from '../config/index.js';
import { ApiError } from '../api/api-error.js';
import type { TokenCheck } from './auth.js';
import { requireToken } from './auth.js';
import { sendJson } from './json-response.js';
import type { AdminRouter } from './router.js';

export function mountReloadRoutes(router: AdminRouter, deps: { check: TokenCheck; reload: () => Promise<ReloadResponse> }): void {
  router.on(
    'POST',
    '/v1/reload',
    requireToken(deps.check, async (_request, response) => {
      let outcome: ReloadResponse;
      try {
        outcome = await deps.reload();
      } catch (error) {
        if (error instanceof ReloadRefusedError) throw new ApiError(409, error.code, error.message);
        if (error instanceof ConfigError) {
          throw new ApiError(422, error.code, `the configuration was not reloaded, the running one stays: ${error.issues.map(formatConfigIssue).join('; ')}`);
        }
        throw error;
      }
      sendJson(response, 200, outcome);
    }),
  );
}
