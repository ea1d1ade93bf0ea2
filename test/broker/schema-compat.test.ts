// JSON Schema compatibility (src/broker/schemas/json-schema.ts): the spec's two rules as a table
// — a new version must not add required fields or remove properties, at any depth — what counts
// as an object schema, and fast-check properties over generated schemas: a schema is compatible
// with itself, adding an optional property is compatible, adding a required one or removing a
// property never is.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { SvcError } from "../../src/core/errors.ts";
import { backwardIncompatibility, parseObjectSchema, schemaNestingMax } from "../../src/broker/schemas/json-schema.ts";

type Schema = { type: "object"; properties?: Record<string, unknown>; required?: string[] };
const obj = (properties: Record<string, unknown> = {}, required: string[] = []): Schema => ({ type: "object", properties, required });
const str = { type: "string" };

describe("the spec's rules", () => {
  const table: [string, Schema, Schema, string | null][] = [
    ["the same schema", obj({ a: str }, ["a"]), obj({ a: str }, ["a"]), null],
    ["an optional property added", obj({ a: str }), obj({ a: str, b: str }), null],
    ["a required field dropped (made optional)", obj({ a: str }, ["a"]), obj({ a: str }), null],
    ["a property's type changed (not a rule of the spec)", obj({ a: str }), obj({ a: { type: "integer" } }), null],
    ["a required field added", obj({ a: str }), obj({ a: str, b: str }, ["b"]), "backward-incompatible: new schema adds required field 'b'"],
    ["an existing property made required", obj({ a: str }), obj({ a: str }, ["a"]), "backward-incompatible: new schema adds required field 'a'"],
    ["a property removed", obj({ a: str, b: str }), obj({ a: str }), "backward-incompatible: new schema removes property 'b'"],
    [
      "a nested required field added",
      obj({ addr: obj({ city: str }) }),
      obj({ addr: obj({ city: str, zip: str }, ["zip"]) }),
      "backward-incompatible: new schema adds required field 'addr.zip'",
    ],
    [
      "a nested property removed",
      obj({ addr: obj({ city: str, zip: str }) }),
      obj({ addr: obj({ city: str }) }),
      "backward-incompatible: new schema removes property 'addr.zip'",
    ],
    ["no properties before or after", { type: "object" }, { type: "object" }, null],
  ];
  for (const [what, before, after, message] of table) {
    test(what, () => {
      expect(backwardIncompatibility(before, after)).toBe(message);
    });
  }
});

describe("what a schema must be", () => {
  const refusal = (text: string) => {
    try {
      parseObjectSchema(text);
    } catch (error) {
      expect(error).toBeInstanceOf(SvcError);
      expect((error as SvcError).status).toBe(400);
      return (error as SvcError).message;
    }
    throw new Error("accepted");
  };
  test("not JSON, not an object schema, or malformed properties and required are 400s that say so", () => {
    expect(refusal("{")).toContain("'schema' is not valid JSON");
    expect(refusal('{"type": "string"}')).toContain('must be a JSON Schema of an object ({"type": "object", ...}), not one of type "string"');
    expect(refusal("[1]")).toContain("not an array");
    expect(refusal('{"type": "object", "properties": []}')).toContain("'properties' of the schema must be an object");
    expect(refusal('{"type": "object", "required": ["a", 1]}')).toContain("'required' of the schema must be an array of property names");
    expect(refusal('{"type": "object", "properties": {"a": {"type": "object", "required": "a"}}}')).toContain("property 'a'");
  });
  test(`nesting is accepted to ${schemaNestingMax} levels, not one more`, () => {
    const nested = (depth: number): Schema => (depth === 1 ? obj() : obj({ n: nested(depth - 1) }));
    expect(() => parseObjectSchema(JSON.stringify(nested(schemaNestingMax)))).not.toThrow();
    expect(refusal(JSON.stringify(nested(schemaNestingMax + 1)))).toContain(`deeper than ${schemaNestingMax}`);
  });
});

describe("properties over generated schemas", () => {
  const name = fc.stringMatching(/^[a-e]{1,2}$/);
  const schema: fc.Arbitrary<Schema> = fc.letrec<{ schema: Schema; property: unknown }>((tie) => ({
    schema: fc
      .tuple(fc.dictionary(name, tie("property"), { maxKeys: 4 }), fc.array(name, { maxLength: 3 }))
      .map(([properties, required]) => obj(properties, [...new Set(required)])),
    property: fc.oneof({ depthSize: "small", withCrossShrink: true }, fc.constant(str), fc.constant({ type: "integer" }), tie("schema")),
  })).schema;

  test("a schema is compatible with itself", () => {
    fc.assert(
      fc.property(schema, (s) => backwardIncompatibility(s, structuredClone(s)) === null),
      { numRuns: 2000 },
    );
  });

  test("adding an optional property is compatible", () => {
    fc.assert(
      fc.property(schema, (s) => {
        const next = structuredClone(s);
        next.properties = { ...next.properties, zz_new: str };
        return backwardIncompatibility(s, next) === null;
      }),
      { numRuns: 2000 },
    );
  });

  test("adding a required field, or removing a property, never is", () => {
    fc.assert(
      fc.property(schema, (s) => {
        const required = structuredClone(s);
        required.properties = { ...required.properties, zz_new: str };
        required.required = [...(required.required ?? []), "zz_new"];
        expect(backwardIncompatibility(s, required)).toBe("backward-incompatible: new schema adds required field 'zz_new'");
        const names = Object.keys(s.properties ?? {});
        if (names.length > 0) {
          const removed = structuredClone(s);
          delete removed.properties![names[0]!];
          expect(backwardIncompatibility(s, removed)).toContain("backward-incompatible");
        }
      }),
      { numRuns: 2000 },
    );
  });
});
