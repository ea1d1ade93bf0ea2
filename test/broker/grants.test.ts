// Grants (src/broker/auth/grants.ts): every example of the spec's prefix rules as a table, the
// matcher against a plain reference over arbitrary names and prefixes (fast-check), the nesting
// of actions, and the checks a key's `acls` pass before it is made.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { SvcError } from "../../src/core/errors.ts";
import { actionCovers, grantsAllow, isGlobalAdminGrants, parseGrants, prefixCovers } from "../../src/broker/auth/grants.ts";

describe("the spec's prefix examples", () => {
  const table: [string, string, boolean][] = [
    ["orders", "orders", true],
    ["orders", "orders.eu", true],
    ["orders", "orders-archive", true],
    ["orders", "orders_2024", true],
    ["orders", "ordersecret", false],
    ["orders", "order", false],
    ["orders", "payments", false],
    ["orders.", "orders.eu", true],
    ["orders.", "orders.", true],
    ["orders.", "orders", false],
    ["orders.", "orders-archive", false],
    ["orders-", "orders-archive", true],
    ["orders.eu", "orders.eu.west", true],
    ["orders.eu", "orders.europe", false],
    ["*", "orders", true],
    ["*", "x", true],
  ];
  for (const [prefix, topic, covers] of table) {
    test(`${JSON.stringify(prefix)} ${covers ? "covers" : "does not cover"} ${JSON.stringify(topic)}`, () => {
      expect(prefixCovers(prefix, topic)).toBe(covers);
    });
  }
});

/** The rule as the spec words it, written plainly: the name itself, or the prefix then a separator, or a prefix ending in one. */
function referenceCovers(prefix: string, topic: string): boolean {
  if (prefix === "*") return true;
  if (topic === prefix) return true;
  const separators = [".", "-", "_"];
  if (separators.includes(prefix.at(-1)!)) return topic.slice(0, prefix.length) === prefix;
  return separators.some((sep) => topic.slice(0, prefix.length + 1) === prefix + sep);
}

describe("against a plain reference matcher", () => {
  // Names from a small alphabet, so prefixes and topics share starts often.
  const name = fc.stringMatching(/^[ab.\-_]{1,8}$/);
  test("agrees on arbitrary prefixes and topics", () => {
    fc.assert(
      fc.property(name, name, (prefix, topic) => prefixCovers(prefix, topic) === referenceCovers(prefix, topic)),
      { numRuns: 20_000 },
    );
  });
  test("agrees when the topic starts with the prefix", () => {
    fc.assert(
      fc.property(name, fc.stringMatching(/^[ab.\-_]{0,6}$/), (prefix, rest) => prefixCovers(prefix, prefix + rest) === referenceCovers(prefix, prefix + rest)),
      { numRuns: 20_000 },
    );
  });
});

describe("actions", () => {
  test("write includes read, admin includes both, read includes nothing more", () => {
    expect([actionCovers("read", "read"), actionCovers("read", "write"), actionCovers("read", "admin")]).toEqual([true, false, false]);
    expect([actionCovers("write", "read"), actionCovers("write", "write"), actionCovers("write", "admin")]).toEqual([true, true, false]);
    expect([actionCovers("admin", "read"), actionCovers("admin", "write"), actionCovers("admin", "admin")]).toEqual([true, true, true]);
  });
  test("a key's grants allow what any one of them allows; admin on '*' is the global admin", () => {
    const grants = parseGrants([
      { action: "read", topic_prefix: "orders" },
      { action: "write", topic_prefix: "logs." },
    ]);
    expect(grantsAllow(grants, "read", "orders.eu")).toBe(true);
    expect(grantsAllow(grants, "write", "orders.eu")).toBe(false);
    expect(grantsAllow(grants, "write", "logs.app")).toBe(true);
    expect(isGlobalAdminGrants(grants)).toBe(false);
    expect(isGlobalAdminGrants(parseGrants([{ action: "admin", topic_prefix: "orders" }]))).toBe(false);
    expect(isGlobalAdminGrants(parseGrants([{ action: "admin", topic_prefix: "*" }]))).toBe(true);
  });
});

describe("checking a key's acls", () => {
  const refusal = (value: unknown) => {
    try {
      parseGrants(value);
    } catch (error) {
      expect(error).toBeInstanceOf(SvcError);
      expect((error as SvcError).status).toBe(400);
      return (error as SvcError).message;
    }
    throw new Error("accepted");
  };
  test("an empty prefix, a '*' inside a prefix, an unknown action, an unknown field are 400s naming the rule", () => {
    expect(refusal([{ action: "read", topic_prefix: "" }])).toContain("'acls[0].topic_prefix' must not be empty");
    expect(
      refusal([
        { action: "read", topic_prefix: "a" },
        { action: "read", topic_prefix: "a*" },
      ]),
    ).toContain("acls[1].topic_prefix");
    expect(refusal([{ action: "delete", topic_prefix: "a" }])).toContain("read, write or admin");
    expect(refusal([{ action: "read", topic_prefix: "a", extra: 1 }])).toContain("unknown field 'extra'");
    expect(refusal([{ action: "read", topic_prefix: "x".repeat(201) }])).toContain("201 characters");
  });
  test("100 rules are accepted, 101 are not; a 200-character prefix is accepted", () => {
    expect(parseGrants(Array.from({ length: 100 }, () => ({ action: "read", topic_prefix: "x" })))).toHaveLength(100);
    expect(refusal(Array.from({ length: 101 }, () => ({ action: "read", topic_prefix: "x" })))).toContain("at most 100");
    expect(parseGrants([{ action: "read", topic_prefix: "x".repeat(200) }])).toHaveLength(1);
  });
});
