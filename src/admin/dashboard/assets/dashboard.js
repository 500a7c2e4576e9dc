// The svc dashboard's one script (a module, no dependencies). The server renders each view's
// structure; this fills it from the admin API with the session cookie, keeps it current, draws the
// Overview's charts as SVG, and runs the Invalidation forms: each is checked by the server's own rules
// (POST /dashboard/api/validate) before it is sent. Every API call carries the session's CSRF token.

const CSRF_TOKEN = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
/** How often live data is read again. */
const POLL_MS = 3000;
/** Points kept per chart: 100 samples of 3 s, five minutes. */
const HISTORY_POINTS = 100;
const SVG_NS = 'http://www.w3.org/2000/svg';
const SESSION_CODES = new Set(['session_expired', 'invalid_session', 'missing_token']);

/** Set once the page is on its way to the login page: nothing more is drawn or asked. */
let leaving = false;

class ApiFailure extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function goToLogin(expired) {
  if (leaving) return;
  leaving = true;
  const query = new URLSearchParams({ next: location.pathname });
  if (expired) query.set('notice', 'expired');
  location.assign(`/dashboard/login?${query}`);
}

/** One admin API call; resolves to the JSON body, or throws an ApiFailure with the server's words. */
async function api(method, path, body) {
  const headers = { accept: 'application/json', 'x-csrf-token': CSRF_TOKEN };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch (error) {
    throw new ApiFailure(0, 'unreachable', `svc did not answer (${error instanceof Error ? error.message : String(error)}).`);
  }
  let json;
  try {
    json = await response.json();
  } catch {
    json = undefined;
  }
  if (response.ok) return json;
  const code = json?.error?.code ?? 'http_error';
  if (response.status === 401 && SESSION_CODES.has(code)) {
    goToLogin(code === 'session_expired');
    throw new ApiFailure(401, code, 'The session has ended.');
  }
  const words = json?.error?.message ?? `HTTP ${response.status} ${response.statusText}`;
  // A page left open across a new login carries the old session's CSRF token: a reload fetches the new one.
  throw new ApiFailure(response.status, code, code === 'csrf_rejected' ? `${words}; reload the page` : words);
}

// ---- small DOM helpers ----

/**
 * An element with attributes and children; strings become text, never markup.
 * @param {string} tag @param {Record<string, string | number | boolean | undefined>} [attributes] @param {...(Node | string | null | undefined)} children
 */
function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

function svg(tag, attributes = {}) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

function byId(id) {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element;
}

function showPageError(message) {
  const box = byId('page-error');
  box.textContent = message;
  box.hidden = message === '';
}

const number = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** The largest binary unit that `bytes` is at least one of (B below 1 KiB), and its size in bytes. */
function byteUnit(bytes) {
  let unit = 0;
  while (bytes >= 1024 ** (unit + 1) && unit < BYTE_UNITS.length - 1) unit += 1;
  return { name: BYTE_UNITS[unit], bytes: 1024 ** unit };
}

function formatBytes(bytes) {
  const unit = byteUnit(bytes);
  return `${number.format(bytes / unit.bytes)} ${unit.name}`;
}

/** `42 s`, `5 min`, `3 h 10 min`, `2 d 4 h`. */
function formatDuration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function ago(iso) {
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  return seconds < 10 ? 'just now' : `${formatDuration(seconds)} ago`;
}

function timeElement(iso) {
  return el('time', { datetime: iso, title: iso }, ago(iso));
}

function percent(ratio) {
  return ratio === null ? '–' : `${number.format(ratio * 100)}%`;
}

/** Runs `work` now and again POLL_MS after each run ends; failures are shown, never thrown. */
function poll(work, what) {
  const run = async () => {
    if (leaving) return;
    try {
      await work();
      showPageError('');
    } catch (error) {
      if (!leaving) showPageError(`Could not load ${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!leaving) setTimeout(run, POLL_MS);
  };
  void run();
}

// ---- charts ----

/** A rounded-up axis maximum (1, 2 or 5 times a power of ten) and the number of grid steps up to it. */
function axis(value) {
  if (!(value > 0)) return { max: 1, steps: 5 };
  const power = 10 ** Math.floor(Math.log10(value));
  for (const [step, steps] of [[1, 5], [2, 4], [5, 5], [10, 5]]) if (value <= step * power) return { max: step * power, steps };
  return { max: 10 * power, steps: 5 };
}

/** Charts span at least this many samples, so a fresh page does not stretch two points edge to edge. */
const MIN_CHART_POINTS = 20;

/**
 * Draws a line chart into a <figure>: one line per series (null values leave gaps), newest sample at
 * the right edge, a labelled y axis, a legend with each series' latest value, and an accessible name
 * that says the same.
 * @param {HTMLElement} figure
 * @param {{ name: string, values: (number | null)[] }[]} series
 * @param {{ unit: string, max?: number, format?: (value: number) => string, latest?: (value: number) => string }} options
 *   `latest` words a series' latest value in the legend (default: formatted, then the unit).
 */
function drawChart(figure, series, options) {
  const format = options.format ?? ((value) => number.format(value));
  const width = 380;
  const height = 130;
  const left = 40;
  const top = 6;
  const plotWidth = width - left - 4;
  const plotHeight = height - top - 10;
  const peak = Math.max(0, ...series.flatMap((item) => item.values.filter((value) => value !== null)));
  const { max, steps } = options.max === undefined ? axis(peak) : { max: options.max, steps: 5 };
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'plot', role: 'img' });
  for (let tick = 0; tick <= steps; tick += 1) {
    const y = top + plotHeight - (plotHeight * tick) / steps;
    chart.append(svg('line', { x1: left, x2: width - 4, y1: y, y2: y, class: 'grid' }));
    const label = svg('text', { x: left - 5, y: y + 3.5, class: 'tick' });
    label.textContent = format((max * tick) / steps);
    chart.append(label);
  }
  const span = Math.max(MIN_CHART_POINTS, ...series.map((item) => item.values.length));
  const step = plotWidth / (span - 1);
  series.forEach((item, index) => {
    const offset = span - item.values.length;
    let points = [];
    const flush = () => {
      if (points.length > 1) chart.append(svg('polyline', { points: points.join(' '), class: `line s${index}` }));
      if (points.length === 1) {
        const [x, y] = points[0].split(',');
        chart.append(svg('circle', { cx: x, cy: y, r: 2, class: `dot s${index}` }));
      }
      points = [];
    };
    item.values.forEach((value, i) => {
      if (value === null) return flush();
      const x = left + (offset + i) * step;
      const y = top + plotHeight - (plotHeight * Math.min(value, max)) / max;
      points.push(`${x.toFixed(1)},${y.toFixed(1)}`);
    });
    flush();
  });
  const describe = options.latest ?? ((value) => `${format(value)} ${options.unit}`);
  const latest = series.map((item) => {
    const value = item.values.at(-1);
    return `${item.name} ${value === null || value === undefined ? 'no data' : describe(value)}`;
  });
  chart.setAttribute('aria-label', `${figure.querySelector('figcaption')?.textContent ?? 'Chart'}, latest: ${latest.join(', ')}`);
  const legend = el(
    'ul',
    { class: 'legend', 'aria-hidden': 'true' },
    ...series.map((item, index) => el('li', {}, el('span', { class: `swatch s${index}` }), latest[index])),
  );
  figure.querySelector('svg.plot')?.remove();
  figure.querySelector('ul.legend')?.remove();
  figure.append(chart, legend);
}

// ---- Overview ----

const HIT_RESULTS = ['HIT', 'STALE'];
const LOOKUP_RESULTS = ['HIT', 'STALE', 'MISS', 'REVALIDATED'];

function sum(record, keys) {
  return keys.reduce((total, key) => total + (record[key] ?? 0), 0);
}

/** The latency at quantile q (seconds) from the difference of two cumulative histograms. */
function quantile(bounds, previous, current, q) {
  const counts = current.map((count, i) => count - (previous[i] ?? 0));
  const total = counts.at(-1) ?? 0;
  if (!(total > 0)) return null;
  const target = q * total;
  for (let i = 0; i < counts.length; i += 1) {
    if (counts[i] < target) continue;
    if (i >= bounds.length) return bounds.at(-1) ?? null;
    const lower = i === 0 ? 0 : bounds[i - 1];
    const below = i === 0 ? 0 : counts[i - 1];
    const inBucket = counts[i] - below;
    return inBucket > 0 ? lower + ((bounds[i] - lower) * (target - below)) / inBucket : bounds[i];
  }
  return null;
}

function startOverview() {
  const history = { results: {}, sources: {}, hitRatio: [], p50: [], p95: [], p99: [], hot: [], warm: [], evictions: [] };
  let previous;
  const push = (list, value) => {
    list.push(value);
    if (list.length > HISTORY_POINTS) list.shift();
  };
  const stat = (name, text) => {
    const target = document.querySelector(`[data-stat="${name}"]`);
    if (target) target.textContent = text;
  };

  poll(async () => {
    const summary = await api('GET', '/dashboard/api/summary');
    const at = performance.now();
    const { requests, duration, tiers } = summary;
    const totalRatio = sum(requests.by_cache_result, LOOKUP_RESULTS);
    stat('hit_ratio_total', `since start: ${percent(totalRatio > 0 ? sum(requests.by_cache_result, HIT_RESULTS) / totalRatio : null)}`);
    stat('requests_total', `${integer.format(requests.total)} since start`);
    stat('hot', formatBytes(tiers.hot.bytes));
    stat('hot_entries', `of ${formatBytes(tiers.hot.max_bytes)}, ${integer.format(tiers.hot.entries)} entries`);
    stat('warm', tiers.warm === null ? 'none' : formatBytes(tiers.warm.bytes));
    stat('warm_entries', tiers.warm === null ? 'no warm tier configured' : `of ${formatBytes(tiers.warm.max_bytes)}, ${integer.format(tiers.warm.entries)} entries`);
    stat('evictions_total', `${integer.format(tiers.hot.evictions)} since start`);

    // Counters go back only when the node restarted: start the rates afresh.
    if (previous !== undefined && requests.total >= previous.summary.requests.total) {
      const seconds = (at - previous.at) / 1000;
      const before = previous.summary;
      const rate = (now, then) => (now - then) / seconds;
      for (const [result, count] of Object.entries(requests.by_cache_result)) {
        push((history.results[result] ??= []), rate(count, before.requests.by_cache_result[result] ?? 0));
      }
      for (const [source, count] of Object.entries(requests.by_source)) {
        push((history.sources[source] ??= []), rate(count, before.requests.by_source[source] ?? 0));
      }
      const lookups = sum(requests.by_cache_result, LOOKUP_RESULTS) - sum(before.requests.by_cache_result, LOOKUP_RESULTS);
      const hits = sum(requests.by_cache_result, HIT_RESULTS) - sum(before.requests.by_cache_result, HIT_RESULTS);
      const ratio = lookups > 0 ? hits / lookups : null;
      push(history.hitRatio, ratio === null ? null : ratio * 100);
      const same = before.duration.bounds_s.length === duration.bounds_s.length;
      const latency = (q) => {
        const value = same ? quantile(duration.bounds_s, before.duration.cumulative, duration.cumulative, q) : null;
        return value === null ? null : value * 1000;
      };
      push(history.p50, latency(0.5));
      push(history.p95, latency(0.95));
      push(history.p99, latency(0.99));
      push(history.evictions, rate(tiers.hot.evictions, before.tiers.hot.evictions));
      const rps = rate(requests.total, before.requests.total);
      stat('rps', number.format(rps));
      stat('hit_ratio', percent(ratio));
      const ms = (value) => (value === null ? '–' : number.format(value));
      stat('latency', `${ms(history.p50.at(-1))} / ${ms(history.p95.at(-1))} / ${ms(history.p99.at(-1))} ms`);
      stat('evictions', `${number.format(history.evictions.at(-1))}/s`);
    }
    push(history.hot, tiers.hot.bytes);
    push(history.warm, tiers.warm === null ? null : tiers.warm.bytes);
    previous = { summary, at };

    const named = (record) => Object.entries(record).map(([name, values]) => ({ name, values }));
    drawChart(byId('chart-results'), named(history.results), { unit: 'req/s' });
    drawChart(byId('chart-sources'), named(history.sources), { unit: 'req/s' });
    drawChart(byId('chart-hit-ratio'), [{ name: 'hit ratio', values: history.hitRatio }], { unit: '%', max: 100 });
    drawChart(byId('chart-latency'), [
      { name: 'p50', values: history.p50 },
      { name: 'p95', values: history.p95 },
      { name: 'p99', values: history.p99 },
    ], { unit: 'ms' });
    // One unit for the axis and the legend, the one that fits the larger tier: a tier of a few KiB
    // charted in MiB would read 0 on every tick.
    const tierSeries = [{ name: 'hot', values: history.hot }, ...(tiers.warm === null ? [] : [{ name: 'warm', values: history.warm }])];
    const unit = byteUnit(Math.max(0, ...tierSeries.flatMap((item) => item.values.filter((value) => value !== null))));
    byId('chart-tiers').querySelector('figcaption').textContent = `Tier sizes (${unit.name})`;
    drawChart(
      byId('chart-tiers'),
      tierSeries.map((item) => ({ name: item.name, values: item.values.map((value) => (value === null ? null : value / unit.bytes)) })),
      // The legend gives each tier in its own unit, as its card does.
      { unit: unit.name, latest: (value) => formatBytes(value * unit.bytes) },
    );
    drawChart(byId('chart-evictions'), [{ name: 'evictions', values: history.evictions }], { unit: '/s' });
    byId('updated').textContent = `Updated ${new Date().toLocaleTimeString('en-GB')}; rates are over the last ${POLL_MS / 1000} s.`;
  }, 'the metrics');
}

// ---- Invalidation ----

const OPERATION_NAMES = { purge: 'Purge', purge_batch: 'Batch purge', ban: 'Ban', refresh: 'Refresh' };
const COUNT_WORDS = { purge: 'removed', purge_batch: 'removed', ban: 'evicted', refresh: 'marked stale' };

async function refreshRecent() {
  const { invalidations } = await api('GET', '/v1/invalidations/recent');
  const list = byId('recent-list');
  list.replaceChildren(
    ...invalidations.map((item) =>
      el(
        'li',
        {},
        el('span', { class: `op op-${item.type}` }, OPERATION_NAMES[item.type] ?? item.type),
        ' ',
        el('code', { class: 'argument' }, item.argument),
        ' ',
        el('span', { class: 'count' }, `${integer.format(item.count)} ${COUNT_WORDS[item.type] ?? ''}`),
        ' ',
        timeElement(item.at),
      ),
    ),
  );
  byId('recent-empty').hidden = invalidations.length > 0;
}

/** The form's values as its operation's request body (URLs trimmed; blank batch lines dropped). */
function formBody(form) {
  const value = (name) => form.elements.namedItem(name)?.value ?? '';
  switch (form.dataset.operation) {
    case 'purge_batch':
      return { urls: value('urls').split('\n').map((line) => line.trim()).filter((line) => line !== '') };
    case 'ban': {
      const body = {};
      for (const field of ['host_regex', 'path_regex', 'surrogate_key']) if (value(field) !== '') body[field] = value(field);
      return body;
    }
    default:
      return { url: value('url').trim() };
  }
}

function describeBan(body) {
  return Object.entries(body).map(([field, value]) => `${field}=${value}`).join(' ');
}

/** What a strong cluster's fan-out did, as the answer says (peers_confirmed, peers_missed, peers_missed_names). */
function reach(answer) {
  if (answer.peers_missed === undefined) return '';
  if (answer.peers_missed === 0) return ` Confirmed by every other node (${answer.peers_confirmed}).`;
  const names = answer.peers_missed_names ?? [];
  const more = answer.peers_missed > names.length ? ` and ${answer.peers_missed - names.length} more` : '';
  return ` Not confirmed by ${answer.peers_missed} of ${answer.peers_confirmed + answer.peers_missed} other nodes: ${names.join(', ')}${more}; gossip and catch-up still bring it to them.`;
}

const SUBMIT = {
  purge: { path: '/v1/purge', done: (body, answer) => `Purged ${body.url}: ${answer.count} stored variants removed on this node.${reach(answer)}` },
  refresh: { path: '/v1/refresh', done: (body, answer) => `Marked ${body.url} stale; its next request revalidates with the origin.${reach(answer)}` },
  ban: { path: '/v1/ban', done: (body, answer) => `Banned ${describeBan(body)}: ${answer.count} hot-tier entries evicted on this node; the rest are hidden on lookup.${reach(answer)}` },
  purge_batch: {
    path: '/v1/purge/batch',
    done: (body, answer) => `Purged ${body.urls.length} URLs: ${answer.count} stored variants removed on this node${answer.failed > 0 ? `, ${answer.failed} not valid` : ''}.${reach(answer)}`,
  },
};

function setStatus(form, text, kind) {
  const status = form.querySelector('.form-status');
  status.textContent = text;
  status.className = `form-status${kind ? ` ${kind}` : ''}`;
}

function clearProblems(form) {
  for (const box of form.querySelectorAll('.field-error')) {
    box.textContent = '';
    box.hidden = true;
  }
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
}

/** Shows each problem under its field (`urls[3]` under the URL list) and moves focus to the first. */
function showProblems(form, problems) {
  const operation = form.dataset.operation;
  let first;
  for (const problem of problems) {
    const name = problem.field.replace(/\[\d+\]$/, '');
    const input = name === 'form' ? null : form.elements.namedItem(name);
    const box = input ? byId(`${input.id}-error`) : byId(`form-${operation}-error`);
    box.textContent = box.textContent === '' ? problem.message : `${box.textContent} ${problem.message}`;
    box.hidden = false;
    if (input) input.setAttribute('aria-invalid', 'true');
    first ??= input ?? form.querySelector('input, textarea');
  }
  first?.focus();
}

/** Checks the form with the server's rules; resolves true when it may be sent. */
async function validate(form, body) {
  const check = await api('POST', '/dashboard/api/validate', { operation: form.dataset.operation, ...body });
  if (check.valid) return true;
  showProblems(form, check.problems);
  return false;
}

/** Wires a form: check, then `send`; problems shown under fields, server errors in words. */
function onSubmit(form, send) {
  for (const input of form.querySelectorAll('input, textarea')) {
    input.addEventListener('input', () => {
      if (input.getAttribute('aria-invalid') === null) return;
      input.removeAttribute('aria-invalid');
      const box = document.getElementById(`${input.id}-error`);
      if (box) box.hidden = true;
    });
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    if (button.disabled) return;
    button.disabled = true;
    clearProblems(form);
    setStatus(form, 'Checking…');
    try {
      const body = formBody(form);
      if (!(await validate(form, body))) {
        setStatus(form, 'Not sent: correct the fields marked above.', 'error');
        return;
      }
      setStatus(form, 'Sending…');
      await send(body);
    } catch (error) {
      if (!leaving) setStatus(form, `svc refused it: ${error instanceof Error ? error.message : String(error)}`, 'error');
    } finally {
      button.disabled = false;
    }
  });
}

function startInvalidation() {
  for (const form of document.querySelectorAll('form.operation')) {
    const { path, done } = SUBMIT[form.dataset.operation];
    onSubmit(form, async (body) => {
      const answer = await api('POST', path, body);
      form.reset();
      // The list shows the operation by the time its success does, not at the next poll. The operation
      // succeeded whatever this reload of the list does: its failure is the next poll's to report.
      await refreshRecent().catch(() => undefined);
      setStatus(form, done(body, answer), 'ok');
    });
  }
  poll(refreshRecent, 'the recent invalidations');
}

// ---- Bans ----

function predicate(item) {
  return el(
    'span',
    { class: 'predicate' },
    ...['host_regex', 'path_regex', 'surrogate_key']
      .filter((field) => item[field] !== null && item[field] !== undefined)
      .map((field) => el('code', {}, `${field}=${item[field]}`)),
  );
}

function startBans() {
  poll(async () => {
    const { bans } = await api('GET', '/v1/bans');
    const rows = bans.map((ban) => {
      const lifetime = (Date.parse(ban.expires_at) - Date.parse(ban.created_at)) / 1000;
      return el(
        'tr',
        {},
        el('td', {}, predicate(ban)),
        el('td', {}, el('time', { datetime: ban.created_at, title: ban.created_at }, formatDuration(ban.age_s))),
        el('td', {}, formatDuration(lifetime - ban.age_s)),
        el('td', { class: 'num' }, integer.format(ban.evicted)),
        el('td', { class: 'num' }, integer.format(ban.hidden)),
        el('td', {}, el('code', { title: ban.id }, ban.id.slice(0, 8))),
      );
    });
    byId('bans-table').querySelector('tbody').replaceChildren(...rows);
    byId('bans-empty').hidden = bans.length > 0;
  }, 'the active bans');
}

// ---- URL inspector ----

function freshness(seconds) {
  if (seconds === null) return '–';
  return seconds >= 0 ? `fresh for ${formatDuration(seconds)}` : `stale for ${formatDuration(-seconds)}`;
}

function pairs(entries) {
  return el('dl', { class: 'pairs' }, ...entries.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
}

/** How a plain GET is answered from the selected copy: the reuse state the data plane itself decides. */
function hitVerdict(check) {
  switch (check.state) {
    case 'stale':
      return `Yes, STALE: a plain GET is answered STALE from the ${check.source} tier while svc revalidates it, for ${formatDuration(check.stale_while_revalidate_s)} more (stale-while-revalidate).`;
    case 'expired':
      return 'Yes, expired: past its freshness and any stale-while-revalidate window, a plain GET waits for the origin (a 304 keeps this copy).';
    case 'no_cache':
      return `Yes, no-cache: a plain GET waits for the origin to validate this copy (a 304 serves it from the ${check.source} tier).`;
    default:
      return `Yes, fresh: a plain GET is a HIT from the ${check.source} tier.`;
  }
}

/** Variants counted per key, as svc inspect counts them: a variant held in both tiers is one. */
function variantCount(variants) {
  return new Set(variants.map((variant) => `${variant.vary.join(',')}=${variant.variant_key}`)).size;
}

function renderInspection(check) {
  const verdict = check.hit
    ? hitVerdict(check)
    : check.variants.length > 0
      ? 'No: what is stored cannot serve a plain GET (another variant, or hidden by an invalidation).'
      : 'No: nothing is stored for this URL on this node.';
  const variants = check.variants.map((variant) =>
    el(
      'tr',
      {},
      el('td', {}, variant.tier),
      el('td', {}, variant.variant_key === '' ? '(no Vary)' : el('code', {}, variant.variant_key)),
      el('td', { class: 'num' }, String(variant.status)),
      el('td', {}, formatDuration(variant.age_s)),
      el('td', {}, freshness(variant.freshness_remaining_s)),
      el('td', {}, variant.forced_stale ? 'yes (refresh)' : 'no'),
      el('td', {}, variant.invalidated ? el('strong', { class: 'warn' }, 'yes') : 'no'),
      el('td', {}, variant.tags.join(' ') || '–'),
      el('td', { class: 'num' }, formatBytes(variant.bytes)),
    ),
  );
  const head = ['Tier', 'Variant', 'Status', 'Age', 'Freshness', 'Forced stale', 'Hidden', 'Tags', 'Size'];
  byId('inspect-result').replaceChildren(
    el('h2', {}, 'What svc holds'),
    pairs([
      ['Cached', verdict],
      ['Key', el('code', {}, check.key)],
      ['Owner node', check.owner ?? 'none (single node or eventual mode)'],
      ['Age', check.age_s === null ? '–' : formatDuration(check.age_s)],
      ['Freshness', freshness(check.freshness_remaining_s)],
      ['Tags', check.tags.join(' ') || '–'],
    ]),
    el('h3', {}, `Stored variants (${variantCount(check.variants)}; copies by tier below)`),
    check.variants.length === 0
      ? el('p', {}, 'None.')
      : el(
          'div',
          { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'Stored variants' },
          el('table', {}, el('thead', {}, el('tr', {}, ...head.map((title) => el('th', { scope: 'col' }, title)))), el('tbody', {}, ...variants)),
        ),
    el('h3', {}, `Active bans that match (${check.matching_bans.length})`),
    check.matching_bans.length === 0
      ? el('p', {}, 'No active ban matches this URL.')
      : el('ul', { class: 'ban-list' }, ...check.matching_bans.map((ban) => el('li', {}, predicate(ban), ' made ', timeElement(ban.created_at)))),
  );
}

function startInspector() {
  const form = byId('form-inspect');
  onSubmit(form, async (body) => {
    const check = await api('GET', `/v1/debug/cachecheck?url=${encodeURIComponent(body.url)}`);
    setStatus(form, '');
    renderInspection(check);
  });
}

// ---- Cluster ----

/**
 * One member's row of the traffic table. Its rates are over the time between this reading and the one
 * before (`before`, or none yet); a member whose counters went back has restarted and starts afresh.
 * Every string a member sent is set as text (el), never as markup.
 */
function trafficRow(member, before, seconds) {
  const name = el('th', { scope: 'row' }, member.name, member.self ? ' (this node)' : '');
  if (member.metrics === null) {
    return el('tr', { class: 'unavailable' }, name, el('td', { colspan: 5 }, el('span', { class: `state state-${member.state}` }, member.state), ` · ${member.unavailable}`));
  }
  const { requests, tiers, uptime_s: uptime } = member.metrics;
  const comparable = before !== undefined && seconds > 0 && requests.total >= before.requests.total;
  const lookups = sum(requests.by_cache_result, LOOKUP_RESULTS) - (comparable ? sum(before.requests.by_cache_result, LOOKUP_RESULTS) : 0);
  const hits = sum(requests.by_cache_result, HIT_RESULTS) - (comparable ? sum(before.requests.by_cache_result, HIT_RESULTS) : 0);
  const ratio = lookups > 0 ? hits / lookups : null;
  const tier = (summary) => (summary === null ? 'none' : `${formatBytes(summary.bytes)} · ${integer.format(summary.entries)} entries`);
  return el(
    'tr',
    { 'data-member': member.name },
    name,
    el('td', { 'data-cell': 'rps' }, comparable ? number.format((requests.total - before.requests.total) / seconds) : '–'),
    el('td', { 'data-cell': 'hit_ratio' }, comparable ? percent(ratio) : `${percent(ratio)} since start`),
    el('td', { 'data-cell': 'hot' }, tier(tiers.hot)),
    el('td', { 'data-cell': 'warm' }, tier(tiers.warm)),
    el('td', {}, formatDuration(uptime)),
  );
}

function startCluster() {
  /** Each member's previous report and when it was read, by name. */
  let previous = new Map();
  poll(async () => {
    const [peers, stats, traffic] = await Promise.all([api('GET', '/v1/cluster/peers'), api('GET', '/v1/stats'), api('GET', '/dashboard/api/cluster')]);
    const at = performance.now();
    byId('traffic-region').hidden = !traffic.clustered;
    byId('traffic-table')
      .querySelector('tbody')
      .replaceChildren(
        ...traffic.members.map((member) => {
          const before = previous.get(member.name);
          return trafficRow(member, before?.metrics, before === undefined ? 0 : (at - before.at) / 1000);
        }),
      );
    previous = new Map(traffic.members.filter((member) => member.metrics !== null).map((member) => [member.name, { metrics: member.metrics, at }]));
    const ring = stats.ring;
    byId('ring').replaceChildren(
      ...(ring === null
        ? []
        : [
            ['Mode', ring.mode],
            ['Members', integer.format(ring.members)],
            ['This node owns', percent(ring.own_share)],
            ['Ring version', integer.format(ring.version)],
            ['Membership checksum', el('code', {}, ring.checksum)],
          ].map(([term, value]) => el('div', { class: 'card' }, el('dt', {}, term), el('dd', {}, value)))),
    );
    const rows = peers.map((peer) =>
      el(
        'tr',
        { class: peer.mode_drift ? 'drift' : undefined },
        el('th', { scope: 'row' }, peer.name),
        el('td', {}, el('span', { class: `state state-${peer.state}` }, peer.state)),
        el('td', {}, peer.mode_drift ? el('strong', { class: 'warn' }, `${peer.mode} (mode drift)`) : peer.mode),
        el(
          'td',
          {},
          peer.ring_share === null
            ? '–'
            : el('span', { class: 'share' }, el('meter', { min: 0, max: 1, value: peer.ring_share, 'aria-hidden': 'true' }), ` ${percent(peer.ring_share)}`),
        ),
        el('td', {}, peer.version),
        el('td', {}, el('code', {}, peer.cluster_address)),
        el('td', {}, el('code', {}, peer.admin_address)),
      ),
    );
    byId('peers-table').querySelector('tbody').replaceChildren(...rows);
    byId('peers-empty').hidden = peers.length > 0;
    const drifted = peers.filter((peer) => peer.mode_drift).map((peer) => peer.name);
    const warning =
      drifted.length === 0
        ? ''
        : `Mode drift: ${drifted.join(', ')} ${drifted.length === 1 ? 'runs' : 'run'} another cluster.mode than this node. Every node of a cluster must use the same mode.`;
    byId('drift').textContent = warning;
    byId('drift').hidden = warning === '';
  }, 'the cluster');
}

// ---- Config ----

async function startConfig() {
  try {
    const [version, config] = await Promise.all([api('GET', '/version'), api('GET', '/v1/config')]);
    // `workers` as it runs (one per core unless the file sets it): /v1/config resolves it.
    const threads = `${config.workers} serving one cache (workers; one per core unless the configuration sets it)`;
    byId('version').replaceChildren(
      ...pairs([['Version', version.version], ['Commit', version.commit], ['Built', version.date], ['Data-plane threads', threads]]).childNodes,
    );
    byId('config-json').textContent = JSON.stringify(config, null, 2);
  } catch (error) {
    if (!leaving) showPageError(`Could not load the configuration: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const VIEWS = {
  overview: startOverview,
  invalidation: startInvalidation,
  bans: startBans,
  inspect: startInspector,
  cluster: startCluster,
  config: startConfig,
};

// What the page hides until a script can fill it or send it (pages.ts): this is that script.
for (const element of document.querySelectorAll('[data-needs-script]')) element.hidden = false;
VIEWS[document.body.dataset.view]?.();
