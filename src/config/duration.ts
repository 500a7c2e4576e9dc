// Durations in the configuration file: `250ms`, `10s`, `5m`, `1h`, combinations written largest
// unit first (`1m30s`), and the bare number 0. They become whole milliseconds.

import * as v from 'valibot';
import { expected } from './messages.js';

/**
 * Each unit at most once, largest first, at most 9 digits each: the sum then stays far below
 * Number.MAX_SAFE_INTEGER, so every accepted text has an exact millisecond value.
 */
const DURATION_SOURCE = '^(?:0|(?=\\d)(?:(\\d{1,9})h)?(?:(\\d{1,9})m)?(?:(\\d{1,9})s)?(?:(\\d{1,9})ms)?)$';
export const DURATION_PATTERN = new RegExp(DURATION_SOURCE);

const UNIT_MS = [3_600_000, 60_000, 1000, 1] as const;

export const DURATION_EXPECTED = 'a duration like "30s"';

/** Milliseconds of a duration text, or undefined when the text is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (match === null) return undefined;
  let totalMs = 0;
  UNIT_MS.forEach((unitMs, index) => {
    const digits = match[index + 1];
    if (digits !== undefined) totalMs += Number(digits) * unitMs;
  });
  return totalMs;
}

/**
 * A duration key: a duration text or the number 0, turned into milliseconds. The description sits
 * before the transform so the JSON Schema (converted in input mode) keeps it.
 */
export function duration(description: string) {
  const message = expected(DURATION_EXPECTED);
  return v.pipe(
    v.union([v.pipe(v.string(message), v.regex(DURATION_PATTERN, message)), v.literal(0, message)], message),
    v.description(description),
    v.transform((input: string | 0): number => (input === 0 ? 0 : (parseDurationMs(input) ?? 0))),
  );
}
