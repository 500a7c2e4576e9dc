// What README.md and docs/*.md name, read from their text: metrics, configuration keys, admin
// endpoints and CLI commands, each with the file and line it is on. How a name is recognised:
// - a metric: `svc_…` anywhere (prose, inline code, code blocks), `nodejs_…`/`process_…` in code, with
//   the label names of a following `{…}`;
// - a configuration key: an inline-code dotted path whose first part is a top-level key
//   (`cluster.tls.ca`, `routes[].cache.ttl_override`), and the first cell of configuration.md's tables;
// - an endpoint: `METHOD /path` in code, and any `/v1/…` path in code;
// - a command: inline code or a code-block line that starts `svc <word>` (or `npx svc <word>`).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Mention {
  /** `docs/operations.md:12`. */
  where: string;
  /** The name as written (a metric with its `{…}`, a command line up to its comment). */
  text: string;
}

export interface MetricMention extends Mention {
  name: string;
  /** A pattern's fixed start (`svc_peer_fetch_(hits|misses)_total`, `svc_cluster_*`, `^svc_cluster_|`): some metric begins so. */
  prefix: boolean;
  /** Label names inside `{…}`; empty without braces. */
  labels: string[];
}

export interface EndpointMention extends Mention {
  /** Undefined when the docs name the path alone. */
  method: string | undefined;
  /** Without its query. */
  path: string;
  /**
   * The path names a family of paths: it ends in `/` (`the /v1/ API`) or `*`, or has a placeholder
   * (`/v1/peer/<channel>`); `path` is then its fixed start.
   */
  prefix: boolean;
}

export interface CommandMention extends Mention {
  /** The words after `svc`, up to a shell operator or comment. */
  words: string[];
}

export interface DocMentions {
  metrics: MetricMention[];
  configKeys: Mention[];
  endpoints: EndpointMention[];
  commands: CommandMention[];
}

interface DocLine {
  where: string;
  /** The whole line. */
  text: string;
  /** Its inline code spans, or the line itself inside a code block. */
  code: string[];
  inCodeBlock: boolean;
  /** The first cell of a table row, when the line is one. */
  firstCell: string | undefined;
}

/** README.md and every docs/*.md, relative to the repository root. */
export function documentationFiles(repo: string): string[] {
  const docs = readdirSync(join(repo, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

function docLines(repo: string, file: string): DocLine[] {
  const lines: DocLine[] = [];
  let fence: string | undefined;
  readFileSync(join(repo, file), 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const where = `${file}:${index + 1}`;
      const marker = /^\s*(```+|~~~+)/.exec(text)?.[1];
      if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
        fence = fence === undefined ? marker : undefined;
        return;
      }
      if (fence !== undefined) {
        lines.push({ where, text, code: [text], inCodeBlock: true, firstCell: undefined });
        return;
      }
      const code = [...text.matchAll(/(`+)(.+?)\1/g)].map((match) => match[2]!.trim());
      const firstCell = /^\|\s*`([^`]+)`\s*\|/.exec(text)?.[1];
      lines.push({ where, text, code, inCodeBlock: false, firstCell });
    });
  return lines;
}

const METRIC = /\b((?:svc|nodejs|process)_[a-z0-9_]*[a-z0-9])(_?[(*[]|\.\*|_(?![a-z0-9_]))?(\{[^}]*\})?/g;
const METHOD_PATH = /\b(GET|HEAD|POST|PUT|PATCH|DELETE)\s+(\/[^\s`'",;)]*)/g;
const V1_PATH = /(?:^|[^\w/.-])(\/v1\/[\w/{}<>*.~-]*)/g;
const COMMAND = /^\s*(?:\$\s+)?(?:npx\s+)?svc\s+([a-z].*)$/;

function labelNames(braces: string | undefined): string[] {
  if (braces === undefined) return [];
  return braces
    .slice(1, -1)
    .split(',')
    .map((part) => /^\s*([a-zA-Z_][a-zA-Z0-9_]*)/.exec(part)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** A path as named: without its query, fragment or a sentence's closing punctuation. */
function barePath(path: string): string {
  return path.replace(/[?#].*$/, '').replace(/[.:]+$/, '');
}

function endpoint(where: string, text: string, method: string | undefined, named: string): EndpointMention {
  const path = barePath(named);
  const placeholder = /[<{*]/.exec(path);
  if (placeholder !== null) return { where, text, method, path: path.slice(0, placeholder.index), prefix: true };
  return { where, text, method, path, prefix: path.endsWith('/') };
}

/** A command's words: up to a pipe, redirection, `&&` or comment; quotes kept as written. */
function commandWords(rest: string): string[] {
  const words: string[] = [];
  for (const word of rest.trim().split(/\s+/)) {
    if (/^(\||>|>>|2>&1|&&|;|#.*|<)$/.test(word) || word.startsWith('#')) break;
    words.push(word);
  }
  return words;
}

export function readDocMentions(repo: string, topLevelKeys: ReadonlySet<string>): DocMentions {
  const mentions: DocMentions = { metrics: [], configKeys: [], endpoints: [], commands: [] };
  const keyPath = new RegExp(`^(?:${[...topLevelKeys].join('|')})(?:\\[\\d*\\])?(?:\\.[a-z0-9_]+(?:\\[\\d*\\])?)+$`);
  for (const file of documentationFiles(repo)) {
    for (const line of docLines(repo, file)) {
      const { where } = line;
      // svc's own metric names are distinctive enough to be found in prose too.
      for (const match of line.text.matchAll(METRIC)) {
        const inCode = line.code.some((code) => code.includes(match[0]));
        if (!match[1]!.startsWith('svc_') && !inCode) continue;
        mentions.metrics.push({ where, text: match[0], name: match[1]!, prefix: match[2] !== undefined, labels: labelNames(match[3]) });
      }
      for (const code of line.code) {
        if (!line.inCodeBlock && keyPath.test(code)) mentions.configKeys.push({ where, text: code });
        for (const match of code.matchAll(METHOD_PATH)) mentions.endpoints.push(endpoint(where, match[0], match[1]!, match[2]!));
        for (const match of code.matchAll(V1_PATH)) {
          const found = endpoint(where, match[1]!, undefined, match[1]!);
          if (!mentions.endpoints.some((known) => known.where === where && known.path === found.path)) mentions.endpoints.push(found);
        }
        const command = COMMAND.exec(code);
        if (command) mentions.commands.push({ where, text: code, words: commandWords(command[1]!) });
      }
      if (file === 'docs/configuration.md' && line.firstCell !== undefined && /^[a-z_][a-z0-9_[\].]*$/.test(line.firstCell)) {
        if (!mentions.configKeys.some((key) => key.where === where && key.text === line.firstCell)) mentions.configKeys.push({ where, text: line.firstCell });
      }
    }
  }
  return mentions;
}
