// Route matching for the data plane: the route whose `host` (when given) equals the request's host
// and whose `path_prefix` is the longest prefix of the path wins. Routes with a host beat routes
// without one at the same prefix length, as a more specific virtual host should.

export interface RouteRule {
  name: string;
  match: { path_prefix: string; host?: string | undefined };
  pool: string;
}

export interface MatchedRoute<R extends RouteRule> {
  rule: R;
  /** The `route` metric label (spec §6.5): the name, or `host:path_prefix` when the name is empty. */
  label: string;
}

/** Label of requests that match no route (spec §6.5). */
export const UNMATCHED_ROUTE_LABEL = '_default';

export function routeLabel(rule: RouteRule): string {
  if (rule.name !== '') return rule.name;
  return `${rule.match.host ?? ''}:${rule.match.path_prefix}`;
}

/** A route as the matcher walks it: its wanted host lower-cased once, not on every request. */
interface OrderedRoute<R extends RouteRule> {
  route: MatchedRoute<R>;
  host: string | undefined;
  prefix: string;
}

export class RouteTable<R extends RouteRule> {
  private readonly ordered: OrderedRoute<R>[];

  constructor(rules: readonly R[]) {
    // Most specific first, so the first match is the answer.
    this.ordered = rules
      .map((rule) => ({ route: { rule, label: routeLabel(rule) }, host: rule.match.host?.toLowerCase(), prefix: rule.match.path_prefix }))
      .sort((a, b) => b.prefix.length - a.prefix.length || Number(b.host !== undefined) - Number(a.host !== undefined));
  }

  /** `host` is the request's host without port, lower-case. */
  match(host: string, path: string): MatchedRoute<R> | undefined {
    for (const candidate of this.ordered) {
      if (candidate.host !== undefined && candidate.host !== host) continue;
      if (path.startsWith(candidate.prefix)) return candidate.route;
    }
    return undefined;
  }
}
