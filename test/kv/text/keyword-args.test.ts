// Option keywords (MAXLEN, NX, WITHSCORES…): isKeyword folds case char by char, making no string,
// and must answer as the upper-casing comparison it replaced for any latin1 text — the chars
// whose capitals are not latin1 (ÿ, µ) or are longer (ß) included — as Redis's strcasecmp does.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { isKeyword } from "../../../src/kv/text/args.ts";

const keywords = ["MAXLEN", "MINID", "LIMIT", "NOMKSTREAM", "NX", "XX", "GT", "LT", "CH", "INCR", "WITHSCORES", "BYSCORE", "REV", "KEEPTTL", "PXAT"];

/** The comparison isKeyword replaced: the reference it is held to. */
const byUpperCase = (arg: string, upper: string) => arg.length === upper.length && arg.toUpperCase() === upper;

/** Latin1 text near a keyword: its letters in any case, with a char swapped for an odd one now and then. */
const nearKeyword = fc
  .tuple(
    fc.constantFrom(...keywords),
    fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
    fc.nat(11),
    fc.constantFrom("ÿ", "µ", "ß", "_", "@", "{", "`", "\u00e9"),
  )
  .map(([keyword, lower, at, odd]) => {
    const chars = [...keyword].map((c, i) => (lower[i] ? c.toLowerCase() : c));
    if (at < chars.length && lower[11]) chars[at] = odd;
    return chars.join("");
  });

const latin1 = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 12 });

test("isKeyword answers as upper-casing the argument would, for any latin1 text", () => {
  fc.assert(
    fc.property(fc.oneof(nearKeyword, latin1), fc.constantFrom(...keywords), (arg, keyword) => {
      expect(isKeyword(arg, keyword)).toBe(byUpperCase(arg, keyword));
    }),
    { numRuns: 5000 },
  );
});

test("a keyword matches in any case, and not with one char off or one char more", () => {
  expect(isKeyword("maxlen", "MAXLEN")).toBe(true);
  expect(isKeyword("MaXlEn", "MAXLEN")).toBe(true);
  expect(isKeyword("MAXLEN", "MAXLEN")).toBe(true);
  expect(isKeyword("MAXLEM", "MAXLEN")).toBe(false);
  expect(isKeyword("MAXLENS", "MAXLEN")).toBe(false);
  expect(isKeyword("MAXLE", "MAXLEN")).toBe(false);
  // '`' and '{' sit just below 'a' and just past 'z', 0x20 above '@' and '[': not letters, so not folded.
  expect(isKeyword("`", "@")).toBe(false);
  expect(isKeyword("{", "[")).toBe(false);
});
