// HTTP-date parsing (RFC 9110 §5.6.7). Recipients must accept all three formats; anything else is
// invalid, which callers treat as the RFC says for their field (e.g. an invalid Expires is "already
// expired", RFC 9111 §5.3). The patterns are compiled once, at module load.
//
// Case: RFC 9110 defines HTTP-date as case-sensitive, and RFC 9111 §4.2 says a cache recipient SHOULD
// match it case-insensitively. svc reads every date as a cache recipient (Date, Expires, Last-Modified,
// If-Modified-Since, If-Range), so every name in every format, GMT included, is matched without regard
// to case. Spacing stays strict, and a zone other than GMT is invalid (§4.2 SHOULD).

const IMF_FIXDATE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
const RFC850_DATE = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
const ASCTIME_DATE = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function toEpochMs(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  if (month < 0 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  // A leap second reads as the last second of its minute.
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // Reject impossible days such as 31 Feb, which Date.UTC would roll over.
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

/** Milliseconds since the epoch, or undefined when `value` is not a valid HTTP-date. */
export function parseHttpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let match = IMF_FIXDATE.exec(text);
  if (match !== null) {
    const [, day, month, year, hour, minute, second] = match as unknown as string[];
    return toEpochMs(Number(year), month as string, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = RFC850_DATE.exec(text);
  if (match !== null) {
    const [, day, month, shortYear, hour, minute, second] = match as unknown as string[];
    // RFC 9110 §5.6.7 reads a two-digit year as the most recent past year with those digits when it
    // would otherwise be more than 50 years ahead; without a clock, 70 is the fixed pivot.
    const yy = Number(shortYear);
    const year = yy < 70 ? 2000 + yy : 1900 + yy;
    return toEpochMs(year, month as string, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = ASCTIME_DATE.exec(text);
  if (match !== null) {
    const [, month, day, hour, minute, second, year] = match as unknown as string[];
    return toEpochMs(Number(year), month as string, Number((day as string).trim()), Number(hour), Number(minute), Number(second));
  }
  return undefined;
}
