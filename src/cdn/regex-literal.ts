// The metacharacter rule of spec §6.2: a ban regex reaches the CDN only when it stands for one literal
// text, since the CDN purges a host name or a URL prefix, not a pattern.
//
// A pattern is literal when every character matches itself: no RE2 metacharacter other than
//   - a leading `^` and a trailing `$` (anchors: the CDN's host and prefix purges are anchored anyway),
//   - `\` before a punctuation character (`\.`, `\-`, `\/`): that character itself,
//   - `.` not followed by a quantifier (a quantifier is a metacharacter): the dot an operator means in `www.example.com` or
//     `/app.js`. Taken as a regex it also matches any other character there, which no real host name
//     or file name in the zone differs by; treating every dotted name as a pattern would keep host and
//     path bans from ever reaching the CDN.
// `\` before a letter or digit (`\d`, `\b`, `\Q`) and every other metacharacter (`* + ? ( ) | [ ] { }`,
// and `^`/`$` elsewhere) make the pattern a regex, so `.*`, `[0-9]+` and `a|b` are never literal.

/** RE2's metacharacters (github.com/google/re2/wiki/Syntax), without `.` and `\` (handled apart). */
const REGEX_METACHARACTERS = new Set(['*', '+', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$']);

/** The literal text `pattern` stands for, or undefined when it is a regex. */
export function literalOf(pattern: string): string | undefined {
  let body = pattern.startsWith('^') ? pattern.slice(1) : pattern;
  // A trailing `$` is an anchor unless it is escaped (`\$` is a literal dollar sign).
  if (body.endsWith('$') && !endsWithEscape(body.slice(0, -1))) body = body.slice(0, -1);
  let literal = '';
  for (let index = 0; index < body.length; index++) {
    const character = body[index]!;
    if (character === '\\') {
      const escaped = body[index + 1];
      if (escaped === undefined || /[A-Za-z0-9]/.test(escaped)) return undefined;
      literal += escaped;
      index++;
      continue;
    }
    if (REGEX_METACHARACTERS.has(character)) return undefined;
    literal += character;
  }
  return literal === '' ? undefined : literal;
}

/** Whether `text` ends in an unpaired backslash, which would escape the character after it. */
function endsWithEscape(text: string): boolean {
  let backslashes = 0;
  for (let index = text.length - 1; index >= 0 && text[index] === '\\'; index--) backslashes++;
  return backslashes % 2 === 1;
}
