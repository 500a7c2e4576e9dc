// Host regexes that name one host exactly (`^shop\.example$`, the common case) are looked up in a
// map rather than matched: the per-host index of the lazy check. Only a pattern whose meaning is
// beyond doubt qualifies: anchored at both ends with an unescaped `^` and `$`, and in between only
// characters that stand for themselves (letters, digits, `-`, `_`, `:`) or punctuation escaped with
// a backslash (`\.`, `\-`, `\:`, `\[`, `\]`). RE2 matches such a pattern against exactly one string
// (case-sensitively, as the map compares), so the map answers exactly what the regex would.

const PLAIN = /^[A-Za-z0-9_:-]$/;
const ESCAPABLE = new Set(['.', '-', ':', '[', ']']);

/** The one host `pattern` matches, or undefined when it is not such a literal. */
export function literalHost(pattern: string): string | undefined {
  if (pattern.length < 2 || !pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  let host = '';
  for (let i = 1; i < pattern.length - 1; i += 1) {
    const char = pattern[i] as string;
    if (char === '\\') {
      const escaped = pattern[i + 1];
      // A backslash just before the final `$` escapes it: the pattern is not anchored at its end.
      if (escaped === undefined || i + 1 === pattern.length - 1 || !ESCAPABLE.has(escaped)) return undefined;
      host += escaped;
      i += 1;
    } else if (PLAIN.test(char)) {
      host += char;
    } else {
      return undefined;
    }
  }
  return host;
}
