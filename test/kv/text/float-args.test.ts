// Float arguments (scores, INCRBYFLOAT): parseFloatArg's digit-loop fast path answers exactly as
// the strtod patterns it skips — the same double (-0 apart from 0) or the same error — for any
// text, leading zeros, signs, 15 and 16 digits included.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { parseFloatArg, parseFloatArgByPattern } from "../../../src/kv/text/args.ts";

const outcome = (parse: (text: string) => number, text: string) => {
  try {
    return { value: parse(text) };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

const digitsLike = fc.string({ unit: fc.constantFrom("0", "1", "9", "-", "+", ".", "e", "x", " "), maxLength: 18 });
const digits = fc
  .tuple(fc.constantFrom("", "-", "+"), fc.string({ unit: fc.constantFrom("0", "1", "5", "9"), minLength: 1, maxLength: 17 }))
  .map(([sign, d]) => sign + d);

test("the fast path and the patterns agree on any text", () => {
  fc.assert(
    fc.property(fc.oneof(digits, digitsLike, fc.string()), (text) => {
      const fast = outcome(parseFloatArg, text);
      const reference = outcome(parseFloatArgByPattern, text);
      expect(fast).toEqual(reference);
      if ("value" in fast) expect(Object.is(fast.value, (reference as { value: number }).value)).toBe(true);
    }),
    { numRuns: 2000 },
  );
  for (const text of ["000000012345", "-0", "+7", "999999999999999", "9999999999999999", "-", "+", ""]) {
    expect(outcome(parseFloatArg, text)).toEqual(outcome(parseFloatArgByPattern, text));
  }
  expect(Object.is(parseFloatArg("-0"), -0)).toBe(true);
  expect(parseFloatArg("000000012345")).toBe(12345);
});
