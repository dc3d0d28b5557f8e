import { types } from 'pg';

const TIMESTAMPTZ = 1184;
const generic = types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

/**
 * Parses Postgres's text form of a timestamptz (`2026-11-29 13:09:20.699123+00`, DateStyle ISO) without regular
 * expressions: every API list returns timestamps, and pg's generic parser (postgres-date, three regexes per value)
 * was a visible share of a list call's CPU. Same result as the generic parser, whose arithmetic it repeats
 * (fraction → `1000 × parseFloat`, offsets of ±hh[:mm[:ss]]); anything outside the common shape (BC, years
 * before 1000 or after 9999, infinity) goes to that parser.
 */
export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  if (n < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return generic(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    let end = i + 1;
    while (end < n && isDigit(text.charCodeAt(end))) end++;
    if (end === i + 1) return generic(text);
    ms = 1000 * parseFloat(text.slice(i, end));
    i = end;
  }
  const sign = text.charCodeAt(i);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || (sign !== 43 && sign !== 45)) return generic(text);
  let offsetSeconds = 0;
  // ±hh, then :mm, then :ss.
  for (let k = 0; k < 3; k++) {
    const unit = OFFSET_UNITS[k];
    const at = i + 1 + 3 * k;
    if (at > n) return generic(text);
    if (at === n) break;
    if (unit !== 3600 && text.charCodeAt(at - 1) !== 58) return generic(text);
    const part = digits(text, at, 2);
    if (part < 0 || (unit === 1 && at + 2 !== n)) return generic(text);
    offsetSeconds += part * unit;
    if (at + 2 === n) break;
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  return new Date(sign === 45 ? utc + offsetSeconds * 1000 : utc - offsetSeconds * 1000);
}

const OFFSET_UNITS = [3600, 60, 1];

/** The `count` decimal digits at `at`, or -1 if any is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let k = at; k < at + count; k++) {
    const c = text.charCodeAt(k);
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - 48);
  }
  return value;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** pg's type parsers with the timestamptz one above: pass as a pool's `types`. */
export const fastTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    return oid === TIMESTAMPTZ && format !== 'binary' ? parseTimestamptz : types.getTypeParser(oid, format ?? 'text');
  },
};
