// Secondary cache keys (RFC 9111 §4.1): the request fields a response's Vary names, normalised so
// requests that mean the same thing select the same stored variant.

import type { HeaderLookup } from './header-lookup.js';

export interface VaryNames {
  /** Lower-case field names, de-duplicated, in first-seen order; `*` is not among them. */
  readonly names: readonly string[];
  /** `Vary: *`: the response can never be selected by a later request, so it is never stored. */
  readonly star: boolean;
}

const NO_VARY: VaryNames = { names: [], star: false };

/** Reads a response's Vary (several lines combined with ", "). */
export function varyNames(responseHeaders: HeaderLookup): VaryNames {
  const value = responseHeaders('vary');
  if (value === undefined) return NO_VARY;
  const names: string[] = [];
  let star = false;
  let start = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i === value.length || value.charCodeAt(i) === 44) {
      const name = value.slice(start, i).trim().toLowerCase();
      if (name === '*') star = true;
      else if (name.length > 0 && !names.includes(name)) names.push(name);
      start = i + 1;
    }
  }
  return names.length === 0 && !star ? NO_VARY : { names, star };
}

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9;
}

/** Removes every space and tab: list members of the Accept-* fields carry none that matter. */
function withoutWhitespace(text: string): string {
  let out = '';
  let runStart = 0;
  for (let i = 0; i < text.length; i++) {
    if (isWhitespace(text.charCodeAt(i))) {
      out += text.slice(runStart, i);
      runStart = i + 1;
    }
  }
  return runStart === 0 ? text : out + text.slice(runStart);
}

/** Trims and collapses each run of spaces and tabs into one space. */
function collapseWhitespace(text: string): string {
  let out = '';
  let pendingSpace = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isWhitespace(code)) {
      pendingSpace = out.length > 0;
    } else {
      if (pendingSpace) out += ' ';
      pendingSpace = false;
      out += text.charAt(i);
    }
  }
  return out;
}

function listMembers(value: string, lowerCase: 'all' | 'media-range'): string[] {
  const members: string[] = [];
  let start = 0;
  for (let i = 0; i <= value.length; i++) {
    if (i === value.length || value.charCodeAt(i) === 44) {
      let member = withoutWhitespace(value.slice(start, i));
      if (member.length > 0) {
        if (lowerCase === 'all') {
          member = member.toLowerCase();
        } else {
          const semicolon = member.indexOf(';');
          member = semicolon < 0 ? member.toLowerCase() : member.slice(0, semicolon).toLowerCase() + member.slice(semicolon);
        }
        members.push(member);
      }
      start = i + 1;
    }
  }
  return members;
}

/**
 * Normalises one request field value for keying:
 * - Accept-Encoding: codings are case-insensitive and their order carries no meaning, so members are
 *   lower-cased, stripped of whitespace, de-duplicated and sorted;
 * - Accept-Language and Accept-Charset: lower-cased, whitespace removed, order kept (it can carry
 *   preference between equal weights);
 * - Accept: whitespace removed, media types lower-cased (parameter values keep their case);
 * - any other field: trimmed, runs of whitespace collapsed to one space.
 */
export function normaliseVaryValue(name: string, value: string): string {
  switch (name) {
    case 'accept-encoding':
      return [...new Set(listMembers(value, 'all'))].sort().join(',');
    case 'accept-language':
    case 'accept-charset':
      return listMembers(value, 'all').join(',');
    case 'accept':
      return listMembers(value, 'media-range').join(',');
    default:
      return collapseWhitespace(value);
  }
}

/**
 * The secondary key of a request for a response varying on `names` (as `CacheEntry.variantKey`): one
 * line per name, `-` when the request lacks the field and `=` + the normalised value when it has it,
 * so an absent field and an empty one select different variants. '' when `names` is empty.
 */
export function variantKey(names: readonly string[], requestHeaders: HeaderLookup): string {
  let key = '';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const value = requestHeaders(name);
    if (i > 0) key += '\n';
    key += value === undefined ? '-' : `=${normaliseVaryValue(name, value)}`;
  }
  return key;
}
