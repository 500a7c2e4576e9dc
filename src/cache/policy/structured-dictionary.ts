// A Structured Field Dictionary parser (RFC 8941 §4.2.2), the syntax of targeted cache-control fields
// such as CDN-Cache-Control (RFC 9213 §2.1). It reads the dictionary into the same directive map as
// Cache-Control so one interpretation serves both; a field that fails to parse is reported as such
// (undefined), because RFC 9213 §2.1 says an invalid targeted field is ignored as a whole.

import type { CacheControlDirectives } from './cache-control.js';

type BareItem =
  | { kind: 'integer'; value: number }
  | { kind: 'string' | 'token'; value: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'other' };

const OTHER: BareItem = { kind: 'other' };
const TRUE: BareItem = { kind: 'boolean', value: true };

class Cursor {
  index = 0;
  constructor(readonly input: string) {}
  get done(): boolean {
    return this.index >= this.input.length;
  }
  peek(): string {
    return this.input.charAt(this.index);
  }
}

class ParseFailure extends Error {}
const FAIL = new ParseFailure('structured field parse failure');

function isLcAlpha(c: string): boolean {
  return c >= 'a' && c <= 'z';
}
function isAlpha(c: string): boolean {
  return isLcAlpha(c) || (c >= 'A' && c <= 'Z');
}
function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}
// tchar (RFC 9110 §5.6.2) plus ":" and "/", as sf-token allows.
const TOKEN_EXTRA = "!#$%&'*+-.^_`|~:/";
function isTokenChar(c: string): boolean {
  return isAlpha(c) || isDigit(c) || (c.length === 1 && TOKEN_EXTRA.includes(c));
}

function parseKey(cursor: Cursor): string {
  const first = cursor.peek();
  if (!isLcAlpha(first) && first !== '*') throw FAIL;
  const start = cursor.index;
  while (!cursor.done) {
    const c = cursor.peek();
    if (!(isLcAlpha(c) || isDigit(c) || c === '_' || c === '-' || c === '.' || c === '*')) break;
    cursor.index++;
  }
  return cursor.input.slice(start, cursor.index);
}

function parseNumber(cursor: Cursor): BareItem {
  const start = cursor.index;
  let negative = false;
  if (cursor.peek() === '-') {
    negative = true;
    cursor.index++;
  }
  if (!isDigit(cursor.peek())) throw FAIL;
  const digitsStart = cursor.index;
  let decimal = false;
  while (!cursor.done) {
    const c = cursor.peek();
    if (isDigit(c)) {
      cursor.index++;
    } else if (c === '.' && !decimal) {
      if (cursor.index - digitsStart > 12) throw FAIL;
      decimal = true;
      cursor.index++;
    } else {
      break;
    }
    if (!decimal && cursor.index - digitsStart > 15) throw FAIL;
    if (decimal && cursor.index - digitsStart > 16) throw FAIL;
  }
  const text = cursor.input.slice(start, cursor.index);
  if (decimal) {
    if (text.endsWith('.') || text.length - text.indexOf('.') - 1 > 3) throw FAIL;
    return OTHER;
  }
  const value = Number(text);
  return negative ? OTHER : { kind: 'integer', value };
}

function parseString(cursor: Cursor): BareItem {
  cursor.index++;
  let value = '';
  while (!cursor.done) {
    const c = cursor.peek();
    cursor.index++;
    if (c === '\\') {
      if (cursor.done) throw FAIL;
      const next = cursor.peek();
      cursor.index++;
      if (next !== '"' && next !== '\\') throw FAIL;
      value += next;
    } else if (c === '"') {
      return { kind: 'string', value };
    } else {
      const code = c.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) throw FAIL;
      value += c;
    }
  }
  throw FAIL;
}

function parseToken(cursor: Cursor): BareItem {
  const start = cursor.index;
  cursor.index++;
  while (!cursor.done && isTokenChar(cursor.peek())) cursor.index++;
  return { kind: 'token', value: cursor.input.slice(start, cursor.index) };
}

function parseByteSequence(cursor: Cursor): BareItem {
  const end = cursor.input.indexOf(':', cursor.index + 1);
  if (end < 0) throw FAIL;
  for (let i = cursor.index + 1; i < end; i++) {
    const c = cursor.input.charAt(i);
    if (!(isAlpha(c) || isDigit(c) || c === '+' || c === '/' || c === '=')) throw FAIL;
  }
  cursor.index = end + 1;
  return OTHER;
}

function parseBareItem(cursor: Cursor): BareItem {
  const c = cursor.peek();
  if (c === '-' || isDigit(c)) return parseNumber(cursor);
  if (c === '"') return parseString(cursor);
  if (c === '*' || isAlpha(c)) return parseToken(cursor);
  if (c === ':') return parseByteSequence(cursor);
  if (c === '?') {
    const next = cursor.input.charAt(cursor.index + 1);
    if (next !== '0' && next !== '1') throw FAIL;
    cursor.index += 2;
    return { kind: 'boolean', value: next === '1' };
  }
  throw FAIL;
}

function skipParameters(cursor: Cursor): void {
  while (cursor.peek() === ';') {
    cursor.index++;
    while (cursor.peek() === ' ') cursor.index++;
    parseKey(cursor);
    if (cursor.peek() === '=') {
      cursor.index++;
      parseBareItem(cursor);
    }
  }
}

function skipInnerList(cursor: Cursor): BareItem {
  cursor.index++;
  for (;;) {
    while (cursor.peek() === ' ') cursor.index++;
    if (cursor.done) throw FAIL;
    if (cursor.peek() === ')') {
      cursor.index++;
      skipParameters(cursor);
      return OTHER;
    }
    parseBareItem(cursor);
    skipParameters(cursor);
    const c = cursor.peek();
    if (c !== ' ' && c !== ')') throw FAIL;
  }
}

/** Directives whose argument is delta-seconds (RFC 9111 §1.2.2): an Integer is the only value they take. */
const INTEGER_DIRECTIVES: ReadonlySet<string> = new Set(['max-age', 's-maxage', 'stale-while-revalidate', 'stale-if-error']);

/** Directives that only ever take `true`, and that only relax what a cache may do. */
const RELAXING_FLAGS: ReadonlySet<string> = new Set(['public', 'must-understand', 'immutable']);

/**
 * Directives that restrict what a cache may do: `true`, or (no-cache, private) a String listing field
 * names. Any other value still counts, as the unqualified directive.
 */
const RESTRICTIVE_DIRECTIVES: ReadonlySet<string> = new Set(['no-store', 'no-cache', 'private', 'must-revalidate', 'proxy-revalidate', 'no-transform']);
const FIELD_LIST_DIRECTIVES: ReadonlySet<string> = new Set(['no-cache', 'private']);

/**
 * The directive argument a member carries (null: no argument), or undefined when the member is
 * dropped. RFC 9213 §2.1 infers each directive's type from its Cache-Control syntax and says values
 * of another type are not consumed:
 * - max-age, s-maxage, stale-while-revalidate, stale-if-error take a non-negative Integer; a String
 *   (`max-age="60"`), Token, Decimal or Boolean drops the directive, so it can never lengthen a
 *   lifetime or open a stale window;
 * - public, must-understand and immutable take `true`; any other value drops them, since each lets a
 *   cache do more;
 * - no-store, no-cache, private, must-revalidate, proxy-revalidate and no-transform take `true`
 *   (no-cache and private also a String of field names); with any other value, `?0` included, they
 *   count unqualified: svc honours the most restrictive reading (RFC 9111 §4.2.1) rather than let a
 *   mistyped restriction lift itself;
 * - any other directive keeps Integer digits and String or Token text; it is ignored later anyway.
 */
function toDirectiveArgument(key: string, item: BareItem): string | null | undefined {
  if (INTEGER_DIRECTIVES.has(key)) return item.kind === 'integer' ? String(item.value) : undefined;
  if (RELAXING_FLAGS.has(key)) return item.kind === 'boolean' && item.value ? null : undefined;
  if (RESTRICTIVE_DIRECTIVES.has(key)) return FIELD_LIST_DIRECTIVES.has(key) && item.kind === 'string' ? item.value : null;
  switch (item.kind) {
    case 'boolean':
      return item.value ? null : undefined;
    case 'integer':
      return String(item.value);
    case 'string':
    case 'token':
      return item.value;
    default:
      return undefined;
  }
}

/**
 * Parses a Dictionary into directives, each value checked against its directive's type
 * (toDirectiveArgument): `?1` and bare keys have no argument, Integers become their digits, Strings
 * and Tokens their text. Parameters are ignored. A repeated key keeps its last value (RFC 8941
 * §4.2.2). Returns undefined when the field is not a valid Dictionary.
 */
export function parseStructuredDictionary(input: string): CacheControlDirectives | undefined {
  const directives = new Map<string, string | null>();
  const cursor = new Cursor(input.trim());
  try {
    while (!cursor.done) {
      const key = parseKey(cursor);
      let item: BareItem = TRUE;
      if (cursor.peek() === '=') {
        cursor.index++;
        item = cursor.peek() === '(' ? skipInnerList(cursor) : parseBareItem(cursor);
      }
      skipParameters(cursor);
      const argument = toDirectiveArgument(key, item);
      if (argument === undefined) directives.delete(key);
      else directives.set(key, argument);
      while (cursor.peek() === ' ' || cursor.peek() === '\t') cursor.index++;
      if (cursor.done) break;
      if (cursor.peek() !== ',') throw FAIL;
      cursor.index++;
      while (cursor.peek() === ' ' || cursor.peek() === '\t') cursor.index++;
      if (cursor.done) throw FAIL;
    }
  } catch (error) {
    if (error instanceof ParseFailure) return undefined;
    throw error;
  }
  return directives;
}
