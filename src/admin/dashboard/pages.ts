// The dashboard's server-rendered pages: the login page (a plain form that needs no script) and one
// page per view, each the same frame (navigation, logout) around the view's own structure. The data
// is filled in by dashboard.js from the admin API; the markup here carries the labels, headings and
// landmarks that make it usable with a keyboard and a screen reader. What only the script can fill or
// send (the live figures, the lists, the operation forms) is `hidden` and marked `data-needs-script`,
// so that without JavaScript a page shows no form that does nothing and no empty list that claims
// there is nothing: the script shows it, and <noscript> names the CLI command that does the same.
import { html, type SafeHtml } from './html.js';

export interface DashboardView {
  /** The path below /dashboard/ ('' for the overview). */
  readonly path: string;
  readonly id: string;
  readonly title: string;
}

export const DASHBOARD_VIEWS: readonly DashboardView[] = [
  { path: '', id: 'overview', title: 'Overview' },
  { path: 'invalidation', id: 'invalidation', title: 'Invalidation' },
  { path: 'bans', id: 'bans', title: 'Bans' },
  { path: 'inspect', id: 'inspect', title: 'URL inspector' },
  { path: 'cluster', id: 'cluster', title: 'Cluster' },
  { path: 'config', id: 'config', title: 'Config' },
];

export const DASHBOARD_ROOT = '/dashboard/';
export const LOGIN_PATH = '/dashboard/login';
export const LOGOUT_PATH = '/dashboard/logout';
export const ASSETS_PATH = '/dashboard/assets/';

export interface PageContext {
  csrfToken: string;
  /** The cluster node name, or undefined for a node that runs alone. */
  nodeName: string | undefined;
  version: string;
}

function head(title: string, withScript: boolean, csrfToken?: string): SafeHtml {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${csrfToken === undefined ? '' : html`<meta name="csrf-token" content="${csrfToken}">`}
<title>${title} · svc</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS_PATH}dashboard.css">
${withScript ? html`<script type="module" src="${ASSETS_PATH}dashboard.js"></script>` : ''}
</head>`;
}

export type LoginNotice = 'expired' | 'logged_out' | 'wrong_token' | 'refused';

const NOTICES: Readonly<Record<LoginNotice, { text: string; alert: boolean }>> = {
  expired: { text: 'Your session has ended. Log in again.', alert: false },
  logged_out: { text: 'You are logged out.', alert: false },
  wrong_token: { text: 'That is not the admin token.', alert: true },
  refused: { text: 'The request was refused.', alert: true },
};

export function loginPage(options: { notice?: LoginNotice | undefined; detail?: string | undefined; next: string }): string {
  const notice = options.notice === undefined ? undefined : NOTICES[options.notice];
  return `<!doctype html>\n${html`<html lang="en">
${head('Log in', false)}
<body class="login-page">
<main id="main" class="login">
<h1>svc dashboard</h1>
<p>Log in with the node's admin token (<code>SVC_ADMIN_TOKEN</code> or <code>admin.token</code>).</p>
${notice === undefined ? '' : html`<p class="notice${notice.alert ? ' error' : ''}" ${notice.alert ? html`role="alert"` : html`role="status"`}>${notice.text}${options.detail === undefined ? '' : html` ${options.detail}`}</p>`}
<form method="post" action="${LOGIN_PATH}">
<input type="hidden" name="next" value="${options.next}">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
</main>
</body>
</html>`}\n`;
}

/** A short page for a refused form post (the logout form without its CSRF token, for one). */
export function refusedPage(message: string): string {
  return `<!doctype html>\n${html`<html lang="en">
${head('Refused', false)}
<body class="login-page">
<main id="main" class="login">
<h1>Refused</h1>
<p role="alert">${message}</p>
<p><a href="${DASHBOARD_ROOT}">Back to the dashboard</a></p>
</main>
</body>
</html>`}\n`;
}

function urlField(form: string, label: string, hint: string): SafeHtml {
  const id = `${form}-url`;
  return html`<label for="${id}">${label}</label>
<p class="hint" id="${id}-hint">${hint}</p>
<input id="${id}" name="url" type="text" inputmode="url" autocomplete="off" spellcheck="false" aria-describedby="${id}-hint ${id}-error">
<p class="field-error" id="${id}-error" hidden></p>`;
}

function banField(name: string, label: string, hint: string): SafeHtml {
  const id = `ban-${name}`;
  return html`<label for="${id}">${label}</label>
<p class="hint" id="${id}-hint">${hint}</p>
<input id="${id}" name="${name}" type="text" autocomplete="off" spellcheck="false" aria-describedby="${id}-hint ${id}-error">
<p class="field-error" id="${id}-error" hidden></p>`;
}

function operationForm(operation: string, title: string, purpose: string, fields: SafeHtml, button: string): SafeHtml {
  return html`<form class="operation" id="form-${operation}" data-operation="${operation}" novalidate aria-labelledby="form-${operation}-title">
<h2 id="form-${operation}-title">${title}</h2>
<p class="purpose">${purpose}</p>
${fields}
<p class="field-error" id="form-${operation}-error" hidden></p>
<button type="submit">${button}</button>
<p class="form-status" role="status" aria-live="polite"></p>
</form>`;
}

const VIEW_BODIES: Readonly<Record<string, () => SafeHtml>> = {
  overview: () => html`<p class="updated" id="updated" data-needs-script hidden>Waiting for the first samples…</p>
<dl class="cards" id="cards" data-needs-script hidden>
<div class="card"><dt>Hit ratio</dt><dd data-stat="hit_ratio">–</dd><dd class="sub" data-stat="hit_ratio_total"></dd></div>
<div class="card"><dt>Requests/s</dt><dd data-stat="rps">–</dd><dd class="sub" data-stat="requests_total"></dd></div>
<div class="card"><dt>Latency p50 / p95 / p99</dt><dd data-stat="latency">–</dd><dd class="sub">over the last interval</dd></div>
<div class="card"><dt>Hot tier</dt><dd data-stat="hot">–</dd><dd class="sub" data-stat="hot_entries"></dd></div>
<div class="card"><dt>Warm tier</dt><dd data-stat="warm">–</dd><dd class="sub" data-stat="warm_entries"></dd></div>
<div class="card"><dt>Evictions/s</dt><dd data-stat="evictions">–</dd><dd class="sub" data-stat="evictions_total"></dd></div>
</dl>
<div class="charts" data-needs-script hidden>
<figure class="chart" id="chart-results"><figcaption>Requests per second by cache result</figcaption></figure>
<figure class="chart" id="chart-sources"><figcaption>Requests per second by source</figcaption></figure>
<figure class="chart" id="chart-hit-ratio"><figcaption>Hit ratio (%)</figcaption></figure>
<figure class="chart" id="chart-latency"><figcaption>Latency (ms)</figcaption></figure>
<figure class="chart" id="chart-tiers"><figcaption>Tier sizes</figcaption></figure>
<figure class="chart" id="chart-evictions"><figcaption>Hot-tier evictions per second</figcaption></figure>
</div>`,

  invalidation: () => html`<noscript><p>Without JavaScript, invalidate with the CLI: <code>svc purge &lt;url&gt;</code>, <code>svc refresh &lt;url&gt;</code>, <code>svc ban host_regex=&lt;regex&gt; path_regex=&lt;regex&gt; surrogate_key=&lt;tag&gt;</code>, <code>svc purge &lt;url&gt; &lt;url&gt;…</code> (one batch); <code>svc bans</code> lists the bans in force.</p></noscript>
<div class="forms" data-needs-script hidden>
${operationForm(
  'purge',
  'Purge',
  'Invalidate one exact URL, every stored variant, on every node. For wrong or sensitive content.',
  urlField('purge', 'URL', 'An absolute http:// or https:// URL with a host.'),
  'Purge URL',
)}
${operationForm(
  'refresh',
  'Refresh',
  'Mark one URL stale: the next request revalidates it with the origin. For updated content where the old copy may linger briefly.',
  urlField('refresh', 'URL', 'An absolute http:// or https:// URL with a host.'),
  'Refresh URL',
)}
${operationForm(
  'ban',
  'Ban',
  'Invalidate everything matching a pattern, for 24 hours. The fields you fill in must all match.',
  html`${banField('host_regex', 'Host regex', 'RE2 expression on the host (with port), e.g. ^shop\\.example$')}
${banField('path_regex', 'Path regex', 'RE2 expression on the path and query, e.g. ^/img/')}
${banField('surrogate_key', 'Surrogate key', 'One tag from Surrogate-Key, Cache-Tag or X-Cache-Tags, e.g. product-7')}`,
  'Ban',
)}
${operationForm(
  'purge_batch',
  'Batch purge',
  'Purge a list of URLs at once.',
  html`<label for="purge_batch-urls">URLs</label>
<p class="hint" id="purge_batch-urls-hint">One absolute http:// or https:// URL per line, at most 1000.</p>
<textarea id="purge_batch-urls" name="urls" rows="5" spellcheck="false" aria-describedby="purge_batch-urls-hint purge_batch-urls-error"></textarea>
<p class="field-error" id="purge_batch-urls-error" hidden></p>`,
  'Purge URLs',
)}
</div>
<section class="recent" aria-labelledby="recent-title" data-needs-script hidden>
<h2 id="recent-title">Recent invalidations</h2>
<p class="hint">On this node, newest first: from this dashboard, the API, the CLI and other nodes.</p>
<ol id="recent-list"></ol>
<p id="recent-empty" hidden>No invalidations yet.</p>
</section>`,

  bans: () => html`<p class="hint">Bans in force on this node, newest first. Each is kept 24 hours. Evicted: hot-tier entries its eager eviction removed; hidden: lookups it has refused since.</p>
<p class="hint" id="bans-lifting">A ban cannot be lifted, here or through the API or the CLI: the spec's admin API (§4.1) has no call that removes one, and none is needed to serve the content again. A ban hides only what was stored before it was made; whatever is fetched after it is cached and served as usual. It ends by itself 24 hours after it was made, and counts towards <code>max_active_bans</code> until then.</p>
<noscript><p>Without JavaScript, <code>svc bans</code> lists the bans in force.</p></noscript>
<div class="table-scroll" tabindex="0" role="region" aria-labelledby="bans-caption" data-needs-script hidden>
<table id="bans-table">
<caption id="bans-caption">Active bans</caption>
<thead><tr><th scope="col">Predicate</th><th scope="col">Age</th><th scope="col">Expires in</th><th scope="col">Evicted</th><th scope="col">Hidden</th><th scope="col">ID</th></tr></thead>
<tbody></tbody>
</table>
</div>
<p id="bans-empty" hidden>No active bans.</p>`,

  inspect: () => html`<noscript><p>Without JavaScript, <code>svc inspect &lt;url&gt;</code> shows the same.</p></noscript>
<form id="form-inspect" data-operation="inspect" novalidate aria-labelledby="inspect-title" data-needs-script hidden>
<h2 id="inspect-title" class="visually-hidden">Inspect a URL</h2>
${urlField('inspect', 'URL to inspect', 'What the cache holds for a plain GET of this URL on this node.')}
<button type="submit">Inspect</button>
<p class="form-status" role="status" aria-live="polite"></p>
</form>
<div id="inspect-result"></div>`,

  cluster: () => html`<p class="notice warn" id="drift" role="alert" hidden></p>
<noscript><p>Without JavaScript, <code>svc cluster peers</code> lists the members.</p></noscript>
<dl class="cards" id="ring"></dl>
<div class="table-scroll" tabindex="0" role="region" aria-labelledby="peers-caption" data-needs-script hidden>
<table id="peers-table">
<caption id="peers-caption">Members as this node sees them</caption>
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Mode</th><th scope="col">Ring share</th><th scope="col">Version</th><th scope="col">Cluster address</th><th scope="col">Admin address</th></tr></thead>
<tbody></tbody>
</table>
</div>
<p id="peers-empty" hidden>This node runs alone: no cluster is configured.</p>
<div class="table-scroll" id="traffic-region" tabindex="0" role="region" aria-labelledby="traffic-caption" data-needs-script hidden>
<table id="traffic-table">
<caption id="traffic-caption">Traffic and tiers of each member, as it reports them to this node</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Requests/s</th><th scope="col">Hit ratio</th><th scope="col">Hot tier</th><th scope="col">Warm tier</th><th scope="col">Up for</th></tr></thead>
<tbody></tbody>
</table>
</div>`,

  config: () => html`<h2>This node</h2>
<dl class="pairs" id="version"></dl>
<h2>Running configuration</h2>
<p class="hint">As <code>GET /v1/config</code> shows it: defaults applied, durations in milliseconds, secrets replaced by "[redacted]".</p>
<pre id="config-json" tabindex="0"></pre>`,
};

export function viewPage(view: DashboardView, context: PageContext): string {
  const nav = DASHBOARD_VIEWS.map(
    (item) =>
      html`<li><a href="${DASHBOARD_ROOT}${item.path}"${item.id === view.id ? html` aria-current="page"` : ''}>${item.title}</a></li>`,
  );
  const body = VIEW_BODIES[view.id];
  if (body === undefined) throw new Error(`dashboard view ${view.id} has no body`);
  return `<!doctype html>\n${html`<html lang="en">
${head(view.title, true, context.csrfToken)}
<body data-view="${view.id}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand"><a href="${DASHBOARD_ROOT}">svc</a> <span class="node">${context.nodeName ?? 'single node'} · ${context.version}</span></p>
<nav aria-label="Dashboard views"><ul>${nav}</ul></nav>
<form method="post" action="${LOGOUT_PATH}" class="logout">
<input type="hidden" name="csrf" value="${context.csrfToken}">
<button type="submit">Log out</button>
</form>
</header>
<main id="main" tabindex="-1">
<h1>${view.title}</h1>
<noscript><p class="notice error">This view needs JavaScript to load its data.</p></noscript>
<p class="notice error" id="page-error" role="alert" hidden></p>
${body()}
</main>
</body>
</html>`}\n`;
}
