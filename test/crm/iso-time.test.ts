// ISO-8601 dates and date-times as crm reads them (src/crm/objects/iso-time.ts): exact calendar
// dates, no rollover, zones applied, years 0000-9999 only. Checked at the edges and against an
// independent model over random parts, in range and out of it.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isCalendarDate, parseInstant } from "../../src/crm/objects/iso-time.ts";

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * The model: Date.UTC on a year moved into 2000-2399 (the Gregorian calendar repeats every 400
 * years, 146,097 days), shifted back by whole cycles. Date.UTC itself takes years 0-99 as 1900-1999
 * and rolls days over, so the model only trusts it for in-range parts, and checks those by
 * round-tripping the day through it.
 */
const cycleMs = 146_097 * 86_400_000;
function modelMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | null {
  const shifted = 2000 + (y % 400);
  const day = new Date(Date.UTC(shifted, mo - 1, d));
  if (mo < 1 || mo > 12 || d < 1 || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  return Date.UTC(shifted, mo - 1, d, h, mi, s, ms) + (Math.floor(y / 400) - 5) * cycleMs;
}
/** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
const minMs = Date.UTC(2000, 0, 1) - 5 * cycleMs;
const maxMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

describe("calendar dates", () => {
  test("February 29th exists in leap years only: every 4th year, not centuries, but every 400th", () => {
    for (const [text, ok] of [
      ["2024-02-29", true],
      ["2023-02-29", false],
      ["2000-02-29", true],
      ["1900-02-29", false],
      ["2400-02-29", true],
      ["0000-02-29", true],
      ["2024-02-30", false],
      ["2024-04-30", true],
      ["2024-04-31", false],
      ["2024-12-31", true],
      ["2024-13-01", false],
      ["2024-00-10", false],
      ["2024-01-00", false],
      ["0000-01-01", true],
      ["9999-12-31", true],
      ["2024-1-01", false],
      ["24-01-01", false],
      ["2024-01-01T00:00:00Z", false],
      [" 2024-01-01", false],
    ] as const) {
      expect(isCalendarDate(text), text).toBe(ok);
    }
  });

  test("a date is midnight UTC of that day", () => {
    expect(parseInstant("2024-02-29")).toBe("2024-02-29T00:00:00.000Z");
    expect(parseInstant("0024-02-29")).toBe("0024-02-29T00:00:00.000Z");
    expect(parseInstant("2023-02-29")).toBeNull();
  });
});

describe("date-times", () => {
  test("hours to 23, minutes and seconds to 59: 24:00 and leap second 60 are refused, not rolled over", () => {
    expect(parseInstant("2024-02-28T23:59:59Z")).toBe("2024-02-28T23:59:59.000Z");
    expect(parseInstant("2024-02-28T24:00:00Z")).toBeNull();
    expect(parseInstant("2024-02-28T24:00Z")).toBeNull();
    expect(parseInstant("2024-02-28T23:60Z")).toBeNull();
    expect(parseInstant("2024-12-31T23:59:60Z")).toBeNull();
    expect(parseInstant("2024-02-30T00:00:00Z")).toBeNull();
  });

  test("zones: Z, ±HH:MM and ±HHMM up to ±23:59, applied to give UTC; none, or past 23:59, is refused", () => {
    expect(parseInstant("2024-01-01T00:00:00+05:30")).toBe("2023-12-31T18:30:00.000Z");
    expect(parseInstant("2024-01-01T00:00:00+0530")).toBe("2023-12-31T18:30:00.000Z");
    expect(parseInstant("2024-02-28T22:00:00-02:00")).toBe("2024-02-29T00:00:00.000Z");
    expect(parseInstant("2024-01-01T00:00:00+23:59")).toBe("2023-12-31T00:01:00.000Z");
    expect(parseInstant("2024-01-01T00:00:00-23:59")).toBe("2024-01-01T23:59:00.000Z");
    expect(parseInstant("2024-01-01T00:00:00-00:00")).toBe("2024-01-01T00:00:00.000Z");
    for (const bad of ["2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+23:60", "2024-01-01T00:00:00", "2024-01-01T00:00:00+5", "2024-01-01T00:00:00 Z"]) {
      expect(parseInstant(bad), bad).toBeNull();
    }
  });

  test("seconds and fractions are optional; a fraction of 1 to 9 digits is kept to the millisecond, truncated", () => {
    expect(parseInstant("2024-05-01T10:00Z")).toBe("2024-05-01T10:00:00.000Z");
    expect(parseInstant("2024-05-01T10:00:07.5Z")).toBe("2024-05-01T10:00:07.500Z");
    expect(parseInstant("2024-05-01T10:00:07.123456789Z")).toBe("2024-05-01T10:00:07.123Z");
    expect(parseInstant("2024-05-01T10:00:07.9999Z")).toBe("2024-05-01T10:00:07.999Z");
    expect(parseInstant("2024-05-01T10:00:07.1234567890Z")).toBeNull();
    expect(parseInstant("2024-05-01T10:00:07.Z")).toBeNull();
    expect(parseInstant("2024-05-01T10:00.5Z")).toBeNull();
  });

  test("only ISO 8601's capitals and separators: lower-case t or z, a space, week or ordinal dates, epoch numbers are refused", () => {
    for (const bad of ["2024-01-01t00:00:00Z", "2024-01-01T00:00:00z", "2024-01-01 00:00:00Z", "2024-W01-1", "2024-001", "1714521600", "", "yesterday"]) {
      expect(parseInstant(bad), bad).toBeNull();
    }
  });

  test("the instant must fall in years 0000 to 9999 in UTC, so its text sorts as time", () => {
    expect(parseInstant("9999-12-31T23:59:59.999Z")).toBe("9999-12-31T23:59:59.999Z");
    expect(parseInstant("9999-12-31T23:59:59+00:01")).toBe("9999-12-31T23:58:59.000Z");
    expect(parseInstant("9999-12-31T23:59:59-00:01")).toBeNull();
    expect(parseInstant("0000-01-01T00:00:00Z")).toBe("0000-01-01T00:00:00.000Z");
    expect(parseInstant("0000-01-01T00:00:00-00:01")).toBe("0000-01-01T00:01:00.000Z");
    expect(parseInstant("0000-01-01T00:00:00+00:01")).toBeNull();
    expect(parseInstant("+010000-01-01T00:00:00Z")).toBeNull();
  });
});

describe("properties", () => {
  test("every instant in years 0000-9999, written as toISOString writes it, reads back as itself", () => {
    fc.assert(
      fc.property(fc.integer({ min: minMs, max: maxMs }), (ms) => {
        const text = new Date(ms).toISOString();
        expect(parseInstant(text)).toBe(text);
        expect(isCalendarDate(text.slice(0, 10))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("random parts, in range and out of it, with any zone: accepted exactly when the model says, at the model's instant", () => {
    const parts = fc.record({
      y: fc.integer({ min: 0, max: 9999 }),
      mo: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      h: fc.integer({ min: 0, max: 25 }),
      mi: fc.integer({ min: 0, max: 61 }),
      s: fc.option(fc.integer({ min: 0, max: 61 })),
      fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
      zone: fc.option(fc.record({ sign: fc.constantFrom(1, -1), h: fc.integer({ min: 0, max: 25 }), m: fc.integer({ min: 0, max: 61 }), colon: fc.boolean() })),
      dateOnly: fc.boolean(),
    });
    fc.assert(
      fc.property(parts, (p) => {
        const date = `${pad(p.y, 4)}-${pad(p.mo, 2)}-${pad(p.d, 2)}`;
        if (p.dateOnly) {
          const ms = modelMs(p.y, p.mo, p.d, 0, 0, 0, 0);
          expect(isCalendarDate(date), date).toBe(ms !== null);
          expect(parseInstant(date), date).toBe(ms === null ? null : new Date(ms).toISOString());
          return;
        }
        const seconds = p.s === null ? "" : `:${pad(p.s, 2)}${p.fraction === null ? "" : `.${p.fraction}`}`;
        const zone = p.zone === null ? "Z" : `${p.zone.sign > 0 ? "+" : "-"}${pad(p.zone.h, 2)}${p.zone.colon ? ":" : ""}${pad(p.zone.m, 2)}`;
        const text = `${date}T${pad(p.h, 2)}:${pad(p.mi, 2)}${seconds}${zone}`;
        const millis = p.s === null || p.fraction === null ? 0 : Number(p.fraction.padEnd(3, "0").slice(0, 3));
        const local = modelMs(p.y, p.mo, p.d, p.h, p.mi, p.s ?? 0, millis);
        const offsetOk = p.zone === null || (p.zone.h <= 23 && p.zone.m <= 59);
        const utc = local === null || !offsetOk ? null : local - (p.zone === null ? 0 : p.zone.sign * (p.zone.h * 60 + p.zone.m) * 60_000);
        const inRange = utc !== null && utc >= minMs && utc <= maxMs;
        expect(parseInstant(text), text).toBe(inRange ? new Date(utc).toISOString() : null);
      }),
      { numRuns: 5000 },
    );
  });
});
