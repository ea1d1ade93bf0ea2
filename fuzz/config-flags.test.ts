// Flag parsing never fails with anything but a bad_config error, spelling does not change
// meaning, and sizes and durations survive formatting.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { flag, formatBytes, formatDuration, parseBytes, parseConfig, parseDuration } from "../src/core/config.ts";
import { SvcError } from "../src/core/errors.ts";

const spec = {
  port: flag.int({ default: 1, min: 0, max: 65535, help: "p" }),
  name: flag.string({ default: "", help: "n" }),
  on: flag.bool({ default: false, help: "o" }),
  mode: flag.enum({ default: "a", choices: ["a", "b"] as const, help: "m" }),
  origin: flag.list({ default: [], help: "o" }),
  size: flag.bytes({ default: 1, help: "s" }),
  wait: flag.duration({ default: 1, help: "w" }),
};
const flagNames = ["--port", "--name", "--on", "--no-on", "--mode", "--origin", "--size", "--wait", "--", "--nope"];

describe("config properties", () => {
  test("arbitrary argv and env either parse or throw a bad_config SvcError", () => {
    const token = fc.oneof(
      fc.constantFrom(...flagNames),
      fc.string(),
      fc.constantFrom(...flagNames).map((f) => `${f}=`),
    );
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 12 }),
        fc.dictionary(fc.constantFrom("X_PORT", "X_ON", "X_SIZE", "X_WAIT", "X_MODE", "X_ORIGIN"), fc.string()),
        (argv, env) => {
          try {
            parseConfig(spec, argv, env, "X");
          } catch (error) {
            expect(error).toBeInstanceOf(SvcError);
            expect((error as SvcError).code).toBe("bad_config");
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test("--name=value and --name value give the same result", () => {
    const pairs = fc.oneof(
      fc.integer({ min: 0, max: 65535 }).map((n) => ["--port", String(n)]),
      fc
        .string()
        .filter((s) => !s.startsWith("--"))
        .map((s) => ["--name", s]),
      fc.constantFrom("a", "b").map((m) => ["--mode", m]),
      fc.nat().map((n) => ["--size", formatBytes(n)]),
      fc.nat().map((n) => ["--wait", formatDuration(n)]),
    );
    fc.assert(
      fc.property(fc.array(pairs, { maxLength: 6 }), (flags) => {
        const spaced = parseConfig(spec, flags.flat(), {}, "X").values;
        const joined = parseConfig(
          spec,
          flags.map(([f, v]) => `${f}=${v}`),
          {},
          "X",
        ).values;
        expect(joined).toEqual(spaced);
      }),
      { numRuns: 200 },
    );
  });

  test("sizes and durations survive formatting and parsing", () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        expect(parseBytes(formatBytes(n))).toBe(n);
        expect(parseDuration(formatDuration(n))).toBe(n);
      }),
      { numRuns: 300 },
    );
  });
});
