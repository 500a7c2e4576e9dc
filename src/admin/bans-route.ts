// `GET /v1/bans` (token or dashboard session): the active bans, newest first, with their age and what
// they matched on this node (`evicted` and `hidden`, as the invalidation engine counts them).
import type { ActiveBan, Invalidator } from '../invalidation/invalidator.js';
import type { BanListEntry, BansResponse } from '../api/responses.js';
import { requireToken } from './auth.js';
import { sendJson } from './json-response.js';
import type { AdminRouter } from './router.js';

export function banListEntry(ban: ActiveBan, nowMs: number): BanListEntry {
  return {
    id: ban.id,
    host_regex: ban.host_regex ?? null,
    path_regex: ban.path_regex ?? null,
    surrogate_key: ban.surrogate_key ?? null,
    created_at: ban.created_at,
    age_s: Math.max(0, Math.floor((nowMs - Date.parse(ban.created_at)) / 1000)),
    expires_at: ban.expires_at,
    evicted: ban.evicted,
    hidden: ban.hidden,
  };
}

export function mountBansRoute(
  router: AdminRouter,
  check: Parameters<typeof requireToken>[0],
  invalidator: Pick<Invalidator, 'activeBans'>,
  now: () => number,
): void {
  router.on(
    'GET',
    '/v1/bans',
    requireToken(check, (_request, response) => {
      const nowMs = now();
      const bans = invalidator.activeBans().reverse().map((ban) => banListEntry(ban, nowMs));
      sendJson(response, 200, { bans } satisfies BansResponse);
    }),
  );
}
