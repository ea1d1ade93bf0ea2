/**
 * ISO-8601 calendar dates and date-times, read exactly. `Date.parse` is not used: it rolls
 * 2024-02-30 over to March 1st, takes 24:00 as the next day and reads years 0-99 as 1900-1999,
 * so a client's mistake would silently become another instant. Here each part is checked against
 * the proleptic Gregorian calendar (a year divisible by 4 is a leap year, except centuries not
 * divisible by 400), and the instant is computed from the parts.
 *
 * Accepted (docs/crm.md): `YYYY-MM-DD`, and `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with a zone `Z` or
 * `±HH:MM` (`±HHMM` too). Hours 00-23 (no 24:00), minutes and seconds 00-59 (no leap second 60,
 * which JavaScript time cannot hold), offsets up to ±23:59 (RFC 3339's grammar), a fraction of 1
 * to 9 digits kept to the millisecond (truncated). Lower-case `t`/`z` and a space for `T` are
 * refused: ISO 8601 has only the capitals. The instant, in UTC, must fall in years 0000-9999, so
 * that its text (what rows store) has four year digits and sorts as time.
 */

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/;

const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const isDate = (y: number, m: number, d: number) => m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);

/** A calendar date `YYYY-MM-DD` that exists (2024-02-29 does, 2023-02-29 does not). */
export function isCalendarDate(text: string): boolean {
  const m = datePattern.exec(text);
  return m !== null && isDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Milliseconds since the epoch of a UTC date and time; setUTCFullYear, unlike Date.UTC, keeps years 0-99. */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, ms);
  return t.getTime();
}

const firstMs = utcMs(0, 1, 1, 0, 0, 0, 0);
const lastMs = utcMs(9999, 12, 31, 23, 59, 59, 999);

/**
 * A date (midnight UTC) or a date-time with a zone, as the UTC text rows store
 * (`2024-05-01T10:00:00.000Z`); null when it is not one, or falls outside years 0000-9999 in UTC.
 */
export function parseInstant(text: string): string | null {
  let ms: number;
  const date = datePattern.exec(text);
  if (date !== null) {
    const [y, mo, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    if (!isDate(y, mo, d)) return null;
    ms = utcMs(y, mo, d, 0, 0, 0, 0);
  } else {
    const m = dateTimePattern.exec(text);
    if (m === null) return null;
    const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
    const [sign, offsetH, offsetM] = [m[8] === "-" ? -1 : 1, Number(m[9] ?? 0), Number(m[10] ?? 0)];
    if (!isDate(y, mo, d) || h > 23 || mi > 59 || s > 59 || offsetH > 23 || offsetM > 59) return null;
    const millis = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
    ms = utcMs(y, mo, d, h, mi, s, millis) - sign * (offsetH * 60 + offsetM) * 60_000;
  }
  return ms < firstMs || ms > lastMs ? null : new Date(ms).toISOString();
}
