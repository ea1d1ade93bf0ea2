// Compiled scripts' number conversions, cjson and cmsgpack (lua-number.ts, lua-cjson.ts,
// lua-cmsgpack.ts) against the native Lua they stand in for: generated numbers, number-like
// strings, JSON texts, msgpack bytes and tables go through both, and each answer must be the
// same — or, on the compiled side, a LuaBail where Lua raises an error (bailing is allowed
// elsewhere only where noted: a NaN, whose sign JavaScript does not keep). Arbitrary input never
// throws anything but LuaBail.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { cjsonDecode, cjsonEncode, cjsonNull, encodeJsonString } from "../../../../src/kv/scripting/compiled/lua-cjson.ts";
import { cmsgpackPack, cmsgpackUnpack } from "../../../../src/kv/scripting/compiled/lua-cmsgpack.ts";
import { formatG, luaStringToNumber, luaToNumberBase, luaToString } from "../../../../src/kv/scripting/compiled/lua-number.ts";
import { LuaTable } from "../../../../src/kv/scripting/compiled/lua-table.ts";
import { LuaBail, type LuaValue } from "../../../../src/kv/scripting/compiled/lua-value.ts";
import { compilesScripts } from "../../../../src/kv/scripting/script-cache.ts";
import { harness, type Plain } from "../../harness.ts";

// The oracle is the native Lua: EVAL's scripts are not compiled here (the setting is put back for
// the test files after this one).
const compiledWasOn = compilesScripts.on;
compilesScripts.on = false;
afterAll(() => {
  compilesScripts.on = compiledWasOn;
});
const h = harness();

/** Runs a script on the native Lua with ARGV = args. */
function lua(script: string, args: string[]): Plain {
  return h.run("EVAL", script, 0, ...args);
}

/** What `f` answers, or BAIL when it throws LuaBail (anything else fails the test). */
const BAIL = Symbol("bail");
/** Why the last BAIL was. */
let bailWhy = "";
function outcome<T>(f: () => T): T | typeof BAIL {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof LuaBail)) throw e;
    bailWhy = e.why;
    return BAIL;
  }
}

/**
 * Whether the last bail was LuaTable's on setting again a key set to nil off its main position:
 * Lua's placement then depends on its collector, and the script is left to it.
 */
function bailedOnDeadKey(): boolean {
  return bailWhy.includes("set to nil");
}

/** A number as text that strtod reads back exactly (tonumber on the Lua side). */
function numberText(n: number): string {
  return Number.isNaN(n) ? "nan" : formatG(n, 17);
}

/** A value's description, the same in Lua (dumpLua) and here: pairs in next order, `#` of tables. */
function dump(v: LuaValue): string {
  if (v instanceof LuaTable) {
    let out = `{#${v.length()}:`;
    for (let pair = v.next(undefined); pair !== undefined; pair = v.next(pair[0])) out += `${dump(pair[0])}=${dump(pair[1])},`;
    return `${out}}`;
  }
  if (v === cjsonNull) return "null";
  switch (typeof v) {
    case "number":
      return Number.isNaN(v) ? "NaN" : `n${formatG(v, 17)}`;
    case "string":
      return `s${v.length}:${v}`;
    case "boolean":
      return String(v);
    case "undefined":
      return "nil";
  }
  return typeof v;
}

const dumpLua = `
local function dump(v)
  local t = type(v)
  if t == 'table' then
    local parts = {'{#', tostring(#v), ':'}
    for k, x in pairs(v) do parts[#parts + 1] = dump(k) .. '=' .. dump(x) .. ',' end
    parts[#parts + 1] = '}'
    return table.concat(parts)
  elseif t == 'number' then
    if v ~= v then return 'NaN' end
    return 'n' .. string.format('%.17g', v)
  elseif t == 'string' then return 's' .. #v .. ':' .. v
  elseif t == 'boolean' then return tostring(v)
  elseif t == 'userdata' then return 'null'
  elseif t == 'nil' then return 'nil'
  end
  return t
end
`;

// ---- generated inputs ---------------------------------------------------------------------------

/** Doubles of every kind %g and strtod care about: integers, fractions, ties, huge, tiny, ±0, ±inf. */
const anyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.double({ noNaN: true, min: -1e20, max: 1e20 }),
  fc.integer({ min: -1e6, max: 1e6 }).map((i) => i / 8),
  fc.integer({ min: -1e9, max: 1e9 }).map((i) => i + 0.5),
  // 15 and 16 digit integers, ending in 5 one time in ten: ties for %.14g and %.15g.
  fc.integer({ min: 1e13, max: 9e15 }),
  fc.integer({ min: 1e13, max: 9e14 }).map((i) => i * 10 + 5),
  fc.tuple(fc.integer({ min: 1, max: 99999 }), fc.integer({ min: -30, max: 30 })).map(([m, e]) => m * 10 ** e),
  fc.tuple(fc.integer({ min: 1, max: 2 ** 20 }), fc.integer({ min: -1074, max: 1023 })).map(([m, e]) => m * 2 ** e),
  fc.constantFrom(0, -0, Infinity, -Infinity, 1e14, 1e15, 1e16, 2 ** 53, 2 ** 63, -(2 ** 63), 2 ** 64, 5e-324, 0.1, 1 / 3, 1e-5, 0.0001, 100000000000000.5),
);

/** A NaN's sign is not kept in JavaScript: writing one bails (tested on its own). */
const notNaN = anyNumber.filter((n) => !Number.isNaN(n));

/** Strings about numbers: whitespace, signs, digits, points, exponents, hex, inf/nan words, garbage. */
const numberLike = fc
  .array(
    fc.oneof(
      fc.constantFrom(" ", "\t", "\n", "\v", "\f", "\r", "+", "-", ".", "e", "E", "p", "P", "x", "X", "0x", "0X", "\0", "(", ")", "_"),
      fc.constantFrom("inf", "INF", "infinity", "Infinity", "infinit", "nan", "NaN", "nan(12ab)", "nan(", "nan()"),
      fc.stringMatching(/^[0-9]{1,25}$/),
      fc.stringMatching(/^[0-9a-fA-F]{1,20}$/),
      fc.constantFrom("1e500", "1e-400", "1e308", "2.4703282292062328e-324", "0x1p-1074", "0x1p-1075", "0x1.fffffffffffff8p0", "0x1p1024", "e5", "1e", "5."),
      anyNumber.map((n) => numberText(n)),
      fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(""));

/** Latin1 strings (one char per byte). */
const bytesString = (maxLength = 40) => fc.array(fc.integer({ min: 0, max: 255 }), { maxLength }).map((codes) => String.fromCharCode(...codes));

// ---- numbers ------------------------------------------------------------------------------------

describe("numbers", () => {
  test("known forms", () => {
    expect(luaToString(1 / 3)).toBe("0.33333333333333");
    expect(luaToString(-0)).toBe("-0");
    expect(luaToString(2 ** 53)).toBe("9.007199254741e+15");
    expect(luaToString(Infinity)).toBe("inf");
    expect(luaToString(-Infinity)).toBe("-inf");
    expect(outcome(() => luaToString(Number.NaN))).toBe(BAIL);
    expect(formatG(100000000000000.5, 14)).toBe("1e+14");
    expect(formatG(0.125, 2)).toBe("0.12");
    expect(luaStringToNumber(" 0x10 ")).toBe(16);
    expect(luaStringToNumber("1e")).toBeUndefined();
    expect(luaStringToNumber("5\0garbage")).toBe(5);
    expect(luaToNumberBase("-ff", 16)).toBe(2 ** 64 - 255);
    expect(outcome(() => luaToNumberBase("7", 37))).toBe(BAIL);
  });

  test("tostring and %.<p>g write what Lua writes", () => {
    const script = `local r = {}
      for i = 1, #ARGV, 2 do
        local n = tonumber(ARGV[i])
        r[#r + 1] = tostring(n) .. ' ' .. string.format('%.' .. ARGV[i + 1] .. 'g', n)
      end
      return r`;
    const precision = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 99 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(notNaN, precision), { minLength: 1, maxLength: 40 }), (cases) => {
        const args = cases.flatMap(([n, p]) => [numberText(n), String(p)]);
        const expected = lua(script, args);
        expect(cases.map(([n, p]) => `${luaToString(n)} ${formatG(n, p)}`)).toEqual(expected as string[]);
      }),
      { numRuns: 300 },
    );
  });

  test("tonumber(s) reads what Lua reads", () => {
    const script = `local r = {}
      for i, s in ipairs(ARGV) do
        local n = tonumber(s)
        r[i] = n == nil and 'nil' or (n ~= n and 'NaN' or string.format('%.17g', n))
        local ok, sum = pcall(function() return s + 0 end)
        r[i] = r[i] .. (ok and ' ok' or ' error')
      end
      return r`;
    fc.assert(
      fc.property(fc.array(fc.oneof(numberLike, bytesString(12)), { minLength: 1, maxLength: 40 }), (strings) => {
        const expected = lua(script, strings);
        const ours = strings.map((s) => {
          const n = luaStringToNumber(s);
          return `${n === undefined ? "nil" : Number.isNaN(n) ? "NaN" : formatG(n, 17)} ${n === undefined ? "error" : "ok"}`;
        });
        expect(ours).toEqual(expected as string[]);
      }),
      { numRuns: 400 },
    );
  });

  test("tonumber(s, base) reads what Lua reads", () => {
    const script = `local r = {}
      for i = 1, #ARGV, 2 do
        local ok, n = pcall(tonumber, ARGV[i], tonumber(ARGV[i + 1]))
        r[#r + 1] = not ok and 'error' or (n == nil and 'nil' or string.format('%.17g', n))
      end
      return r`;
    const digits = fc
      .array(fc.oneof(fc.constantFrom(" ", "\t", "+", "-", "0x", "0X", "\0", ".", "z", "Z", "g"), fc.stringMatching(/^[0-9a-zA-Z]{1,22}$/)), { maxLength: 4 })
      .map((parts) => parts.join(""));
    const base = fc.oneof(
      fc.integer({ min: 2, max: 36 }),
      fc.constantFrom(10, 16, 2, 36),
      fc.integer({ min: -5, max: 40 }),
      fc.double({ min: 1, max: 40, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(digits, base), { minLength: 1, maxLength: 30 }), (cases) => {
        const expected = lua(
          script,
          cases.flatMap(([s, b]) => [s, formatG(b, 17)]),
        );
        const ours = cases.map(([s, b]) => {
          const n = outcome(() => luaToNumberBase(s, b));
          return n === BAIL ? "error" : n === undefined ? "nil" : formatG(n, 17);
        });
        expect(ours).toEqual(expected as string[]);
      }),
      { numRuns: 300 },
    );
  });

  test("arbitrary strings never throw but LuaBail", () => {
    fc.assert(
      fc.property(fc.oneof(numberLike, bytesString(60), fc.string()), fc.double(), fc.integer({ min: 0, max: 120 }), (s, n, p) => {
        outcome(() => luaStringToNumber(s));
        outcome(() => luaToNumberBase(s, p));
        outcome(() => formatG(n, p));
        outcome(() => luaToString(n));
      }),
      { numRuns: 3000 },
    );
  });
});

// ---- cjson --------------------------------------------------------------------------------------

/** JSON-ish number texts: valid, and every form lua-cjson reads or refuses. */
const jsonNumber = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? "-0" : String(n))),
  fc.constantFrom("-0", "1e5", "1E+5", "1e-400", "1e400", "0x1F", "-0x10", "0x1.8p3", "0x1p-1074", "0x0p2000", "0x", "0x.8", "0x1fffffffffffff1"),
  fc.constantFrom("Infinity", "-Infinity", "NaN", "nan", "inf", "+5", "+inf", "01", "1.", ".5", "-", "1e", "+", "--1", "1.5.3", "Inf", "nan(1)"),
  fc.stringMatching(/^-?[0-9]{1,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,4})?$/),
);

/** A JSON string's text: plain, high and control bytes, every escape, \u with valid and broken surrogates. */
const jsonString = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: fc.stringMatching(/^[a-zA-Z0-9 _:,{}[\]]{1,8}$/) },
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 1, max: 0x1f }).map((c) => String.fromCharCode(c)),
      fc.constantFrom(
        '\\"',
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\x",
        "\\",
        "\\u12",
        "\\u00e9",
        "\\u0000",
        "\\uD83D\\uDE00",
        "\\uDE00",
        "\\uD83D",
        "\\uD83Dx",
        "\\uD83D\\u0041",
        "\\uFFFF",
        "\\u10FFFF",
      ),
      fc.integer({ min: 0, max: 0xffff }).map((c) => `\\u${c.toString(16).padStart(4, "0")}`),
    ),
    { maxLength: 6 },
  )
  .map((parts) => `"${parts.join("")}"`);

const jsonSpace = fc.constantFrom("", "", "", " ", "\n", "\t\r ", "\v", "\f");

const { json } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    jsonNumber,
    jsonString,
    fc.constantFrom("true", "false", "null", "tru", "nul", "nulls", "truefalse"),
    fc
      .tuple(fc.array(fc.tuple(jsonSpace, tie("json"), jsonSpace), { maxLength: 5 }), fc.boolean())
      .map(([items, trailing]) => `[${items.map(([a, v, b]) => a + v + b).join(",")}${trailing ? "," : ""}]`),
    fc
      .tuple(fc.array(fc.tuple(jsonString, jsonSpace, tie("json")), { maxLength: 5 }), fc.boolean())
      .map(([pairs, trailing]) => `{${pairs.map(([k, s, v]) => `${k}${s}:${s}${v}`).join(",")}${trailing ? "," : ""}}`),
  ),
}));

/** A JSON text, now and then damaged: cut short, a byte put in, a NUL. */
const jsonText = fc.tuple(json, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 9 })).map(([text, at, byte, how]) => {
  const i = at % (text.length + 1);
  if (how === 1) return text.slice(0, i);
  if (how === 2) return text.slice(0, i) + String.fromCharCode(byte) + text.slice(i);
  if (how === 3) return `${text.slice(0, i)}\0${text.slice(i)}`;
  return text;
});

describe("cjson", () => {
  test("decode builds what Lua builds, in the same order, and fails where Lua fails", () => {
    const script = `${dumpLua}
      local r = {}
      for i, s in ipairs(ARGV) do
        local ok, v = pcall(cjson.decode, s)
        if not ok then r[i] = 'error' else
          local eok, e = pcall(cjson.encode, v)
          r[i] = dump(v) .. ' => ' .. (eok and e or 'error')
        end
      end
      return r`;
    fc.assert(
      fc.property(fc.array(jsonText, { minLength: 1, maxLength: 20 }), (texts) => {
        const expected = lua(script, texts) as string[];
        texts.forEach((text, i) => {
          const decoded = outcome(() => cjsonDecode(text));
          if (decoded === BAIL) {
            expect([text, expected[i]]).toEqual([text, "error"]);
            return;
          }
          const encoded = outcome(() => cjsonEncode(decoded));
          const ours = `${dump(decoded)} => ${encoded === BAIL ? "error" : encoded}`;
          expect([text, ours]).toEqual([text, expected[i]!]);
        });
      }),
      { numRuns: 400 },
    );
  });

  test("strings encode as Lua encodes them", () => {
    fc.assert(
      fc.property(fc.array(bytesString(30), { minLength: 1, maxLength: 20 }), (strings) => {
        const expected = lua("local r = {} for i, s in ipairs(ARGV) do r[i] = cjson.encode(s) end return r", strings);
        expect(strings.map(encodeJsonString)).toEqual(expected as string[]);
      }),
      { numRuns: 200 },
    );
  });

  test("nesting: 1000 deep decodes and encodes, 1001 fails", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    const script =
      "local ok, v = pcall(cjson.decode, ARGV[1]) if not ok then return 'error' end local eok, e = pcall(cjson.encode, v) return eok and e or 'encode error'";
    for (const n of [999, 1000, 1001]) {
      const ours = outcome(() => cjsonEncode(cjsonDecode(deep(n))));
      const theirs = lua(script, [deep(n)]);
      expect(ours === BAIL ? "error" : ours).toEqual(theirs as string);
    }
    // Objects nest alike, and a UTF-16 text is refused.
    const objects = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
    expect(outcome(() => cjsonDecode(objects(1000)))).not.toBe(BAIL);
    expect(outcome(() => cjsonDecode(objects(1001)))).toBe(BAIL);
    expect(outcome(() => cjsonDecode("\0["))).toBe(BAIL);
  });

  test("arbitrary input never throws but LuaBail", () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, bytesString(80), fc.string()), (text) => {
        const v = outcome(() => cjsonDecode(text));
        if (v !== BAIL) outcome(() => cjsonEncode(v));
      }),
      { numRuns: 3000 },
    );
  });
});

// ---- tables built by the same assignments in Lua and here ---------------------------------------

/**
 * A value in an assignment, as text both sides read: s:<bytes>, n:<number>, b:0/1, t:<table>
 * (made when first named), N (cjson.null), z (nil).
 */
type Assignment = [table: number, key: string, value: string];

const keyText = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 20 }).map((i) => `n:${i}`) },
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z]{0,3}$/).map((s) => `s:${s}`) },
  // Not cjson.null: Lua hashes it to node 0, LuaTable (for now) as it hashes a function.
  fc.constantFrom("n:0", "n:-0", "n:-1", "n:1.5", "n:100", "n:1e300", "n:inf", "n:-inf", "b:1", "b:0", 's:/"\\\n\u00e9'),
  notNaN.map((n) => `n:${numberText(n)}`),
);

const valueText = (tables: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: -200, max: 70000 }).map((i) => `n:${i}`) },
    fc.stringMatching(/^[a-z/"\\]{0,4}$/).map((s) => `s:${s}`),
    anyNumber.map((n) => `n:${numberText(n)}`),
    fc.constantFrom("b:1", "b:0", "N", "z", "n:nan", `s:${"x".repeat(40)}`, `s:${"y".repeat(300)}`),
    fc.integer({ min: 2, max: tables }).map((t) => `t:${t}`),
  );

/** Assignments into tables 1..5, each table only holding tables of higher numbers (no cycles). */
const assignment = (t: number) =>
  fc.tuple(
    fc.constant(t),
    keyText,
    valueText(5).filter((v) => !v.startsWith("t:") || Number(v.slice(2)) > t),
  );

/** Arrays first (t[1..n] = v, in order or not), then any assignments. */
const assignments = fc
  .tuple(
    fc.array(
      fc
        .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 20 }), fc.boolean())
        .chain(([t, n, reversed]) =>
          fc.tuple(...Array.from({ length: n }, (_, i) => assignment(t).map(([, , v]): Assignment => [t, `n:${reversed ? n - i : i + 1}`, v]))),
        ),
      { maxLength: 3 },
    ),
    fc.array(
      fc.integer({ min: 1, max: 5 }).chain((t) => assignment(t)),
      { maxLength: 30 },
    ),
  )
  .map(([arrays, rest]) => [...arrays.flat(), ...rest] as Assignment[]);

const buildLua = `
local tables = {{}}
local function val(d)
  local tag, rest = d:sub(1, 1), d:sub(3)
  if tag == 's' then return rest
  elseif tag == 'n' then return tonumber(rest)
  elseif tag == 'b' then return rest == '1'
  elseif tag == 'N' then return cjson.null
  elseif tag == 't' then local i = tonumber(rest); tables[i] = tables[i] or {}; return tables[i]
  end
  return nil
end
for i = 1, #ARGV, 3 do
  local t = tables[tonumber(ARGV[i])]
  if t then t[val(ARGV[i + 1])] = val(ARGV[i + 2]) end
end
local root = tables[1]
`;

/** The same assignments here; undefined when LuaTable bails on one. */
function build(list: Assignment[]): LuaTable | undefined {
  const tables: (LuaTable | undefined)[] = [undefined, new LuaTable()];
  const val = (d: string): LuaValue => {
    const rest = d.slice(2);
    switch (d[0]) {
      case "s":
        return rest;
      case "n":
        return luaStringToNumber(rest);
      case "b":
        return rest === "1";
      case "N":
        return cjsonNull;
      case "t": {
        const i = Number(rest);
        tables[i] ??= new LuaTable();
        return tables[i];
      }
    }
    return undefined;
  };
  const built = outcome(() => {
    for (const [t, k, v] of list) tables[t]?.set(val(k), val(v));
  });
  return built === BAIL ? undefined : tables[1];
}

/** A binary string as hex, to compare readably. */
function hex(s: string): string {
  return Buffer.from(s, "latin1").toString("hex");
}

describe("tables", () => {
  test("cjson.encode and cmsgpack.pack of tables write what Lua writes", () => {
    const script = `${buildLua}
      local ok, e = pcall(cjson.encode, root)
      local pok, p = pcall(cmsgpack.pack, root)
      return {ok and e or 'error', pok and p or 'error'}`;
    let compared = 0;
    fc.assert(
      fc.property(assignments, (list) => {
        const root = build(list);
        if (root === undefined) return;
        const [json, packed] = lua(script, list.flat().map(String)) as string[];
        const ours = outcome(() => cjsonEncode(root));
        expect(ours === BAIL ? "error" : ours).toBe(json!);
        const ourPack = outcome(() => cmsgpackPack([root]));
        // Packing a NaN bails (its bits are not known here).
        if (ourPack === BAIL) expect(list.some(([, , v]) => v === "n:nan")).toBe(true);
        else expect(hex(ourPack)).toBe(hex(packed!));
        compared++;
      }),
      { numRuns: 500 },
    );
    expect(compared).toBeGreaterThan(300);
  });

  test("cmsgpack.pack of numbers and strings as arguments", () => {
    const script =
      "local v = {} for i, s in ipairs(ARGV) do local n = tonumber(s) if n ~= nil then v[i] = n else v[i] = s end end return cmsgpack.pack(unpack(v, 1, #ARGV))";
    const boundaries = fc.constantFrom(
      127,
      128,
      255,
      256,
      65535,
      65536,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 53,
      2 ** 63,
      -(2 ** 63),
      -32,
      -33,
      -128,
      -129,
      -32768,
      -32769,
      -(2 ** 31),
      -(2 ** 31) - 1,
      0.5,
      1e39,
      3.4028234663852886e38,
    );
    const argument = fc.oneof(
      notNaN.map(numberText),
      boundaries.map(numberText),
      fc.integer({ min: 0, max: 70000 }).map((n) => "s".repeat(n % 300 === 0 ? n : n % 300)),
    );
    fc.assert(
      fc.property(fc.array(argument, { minLength: 1, maxLength: 10 }), (args) => {
        const values = args.map((s) => luaStringToNumber(s) ?? s);
        expect(hex(cmsgpackPack(values))).toBe(hex(lua(script, args) as string));
      }),
      { numRuns: 300 },
    );
    expect(outcome(() => cmsgpackPack([]))).toBe(BAIL);
  });
});

// ---- cmsgpack unpack ----------------------------------------------------------------------------

function bytes(...codes: number[]): string {
  return String.fromCharCode(...codes);
}

function bigEndian(n: bigint, width: number): string {
  let out = "";
  for (let i = width - 1; i >= 0; i--) out += String.fromCharCode(Number((n >> BigInt(8 * i)) & 0xffn));
  return out;
}

const msgpackString = fc.tuple(bytesString(40), fc.integer({ min: 0, max: 3 })).map(([s, form]) => {
  if (form === 0 && s.length < 32) return bytes(0xa0 | s.length) + s;
  if (form <= 1) return bytes(0xd9, s.length) + s;
  if (form === 2) return bytes(0xda, 0, s.length) + s;
  return bytes(0xdb, 0, 0, 0, s.length) + s;
});

const msgpackScalar = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }).map((c) => bytes(c)),
  fc.integer({ min: 0xe0, max: 0xff }).map((c) => bytes(c)),
  fc.constantFrom(bytes(0xc0), bytes(0xc2), bytes(0xc3)),
  fc
    .tuple(fc.constantFrom(0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
    .map(([kind, n]) => bytes(kind) + bigEndian(n, 1 << (kind & 3))),
  fc
    .oneof(
      fc.integer().map((bits) => bits >>> 0),
      fc.constant(0x7fc00000),
      fc.constant(0xffc00000),
    )
    .map((bits) => bytes(0xca) + bigEndian(BigInt(bits), 4)),
  fc
    .oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.constant(0x7ff8000000000000n), fc.constant(0xfff8000000000000n))
    .map((bits) => bytes(0xcb) + bigEndian(bits, 8)),
  msgpackString,
  fc.integer({ min: 0, max: 255 }).map((c) => bytes(c)),
);

const { msgpack } = fc.letrec<{ msgpack: string }>((tie) => ({
  msgpack: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    msgpackScalar,
    fc.tuple(fc.array(tie("msgpack"), { maxLength: 6 }), fc.integer({ min: 0, max: 2 })).map(([items, form]) => {
      const n = items.length;
      const head = form === 0 ? bytes(0x90 | n) : form === 1 ? bytes(0xdc, 0, n) : bytes(0xdd, 0, 0, 0, n);
      return head + items.join("");
    }),
    fc
      .tuple(
        fc.array(fc.tuple(fc.oneof({ weight: 8, arbitrary: msgpackScalar }, tie("msgpack")), tie("msgpack")), { maxLength: 5 }),
        fc.integer({ min: 0, max: 2 }),
      )
      .map(([pairs, form]) => {
        const n = pairs.length;
        const head = form === 0 ? bytes(0x80 | n) : form === 1 ? bytes(0xde, 0, n) : bytes(0xdf, 0, 0, 0, n);
        return head + pairs.map(([k, v]) => k + v).join("");
      }),
  ),
}));

/** Some msgpack values, now and then damaged: cut short, a byte changed or put in. */
const msgpackText = fc
  .tuple(fc.array(msgpack, { maxLength: 3 }), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 5 }))
  .map(([values, at, byte, how]) => {
    const text = values.join("");
    const i = at % (text.length + 1);
    if (how === 1) return text.slice(0, i);
    if (how === 2) return text.slice(0, i) + String.fromCharCode(byte) + text.slice(i);
    if (how === 3 && i < text.length) return text.slice(0, i) + String.fromCharCode(byte) + text.slice(i + 1);
    return text;
  });

/**
 * cmsgpack.unpack(text), and whether it keyed a table by a table (even with a nil value): Lua
 * places such a key by its address, so the order of the whole table differs from run to run.
 */
function unpackWatchingKeys(text: string): { values: LuaValue[] | typeof BAIL; tableKeyed: boolean } {
  const set = LuaTable.prototype.set;
  let tableKeyed = false;
  LuaTable.prototype.set = function (this: LuaTable, key: LuaValue, value: LuaValue) {
    if (key instanceof LuaTable) tableKeyed = true;
    set.call(this, key, value);
  };
  try {
    return { values: outcome(() => cmsgpackUnpack(text)), tableKeyed };
  } finally {
    LuaTable.prototype.set = set;
  }
}

describe("cmsgpack", () => {
  test("unpack makes what Lua makes, in the same order, and fails where Lua fails; pack writes it back alike", () => {
    const script = `${dumpLua}
      local function results(...) return select('#', ...), {...} end
      local r = {}
      for i, s in ipairs(ARGV) do
        local n, v = results(pcall(cmsgpack.unpack, s))
        if not v[1] then r[i] = 'error' else
          local parts = {}
          for j = 2, n do parts[#parts + 1] = dump(v[j]) end
          local pok, p = pcall(cmsgpack.pack, unpack(v, 2, n))
          r[i] = table.concat(parts, ';') .. ' => ' .. (pok and p or 'error')
        end
      end
      return r`;
    let unpacked = 0;
    fc.assert(
      fc.property(fc.array(fc.oneof({ weight: 4, arbitrary: msgpackText }, bytesString(12)), { minLength: 1, maxLength: 20 }), (texts) => {
        const expected = lua(script, texts) as string[];
        texts.forEach((text, i) => {
          const { values, tableKeyed } = unpackWatchingKeys(text);
          if (values === BAIL) {
            if (bailedOnDeadKey()) return;
            expect([hex(text), expected[i]]).toEqual([hex(text), "error"]);
            return;
          }
          unpacked++;
          const theirs = expected[i]!;
          if (tableKeyed) {
            expect(theirs).not.toBe("error");
            return;
          }
          const packed = outcome(() => cmsgpackPack(values));
          const ourDump = values.map(dump).join(";");
          if (packed === BAIL && values.length > 0) {
            // Only a NaN keeps pack from answering here.
            expect(ourDump).toContain("NaN");
            expect([hex(text), theirs.startsWith(`${ourDump} => `)]).toEqual([hex(text), true]);
            return;
          }
          const ours = `${ourDump} => ${packed === BAIL ? "error" : packed}`;
          expect([hex(text), hex(ours)]).toEqual([hex(text), hex(theirs)]);
        });
      }),
      { numRuns: 400 },
    );
    expect(unpacked).toBeGreaterThan(500);
  });

  test("arrays with nils have Lua's length and order; tables nested past 16 pack as nil", () => {
    const cases = [
      bytes(0x94, 0x01, 0xc0, 0x03, 0xc0),
      bytes(0x93, 0xc0, 0xc0, 0x01),
      bytes(0x84, 0xa1, 0x61, 0xc0, 0xa1, 0x62, 0x01, 0x01, 0xc0, 0x02, 0x02),
      `${"\x91".repeat(20)}\x01`,
      bytes(0x81, 0xc0, 0x01),
    ];
    const script = `${dumpLua}
      local ok, v = pcall(cmsgpack.unpack, ARGV[1])
      if not ok then return 'error' end
      return dump(v) .. ' => ' .. cmsgpack.pack(v)`;
    for (const text of cases) {
      const values = outcome(() => cmsgpackUnpack(text));
      const ours = values === BAIL ? "error" : `${dump(values[0])} => ${cmsgpackPack([values[0]])}`;
      expect(hex(ours)).toBe(hex(lua(script, [text]) as string));
    }
  });

  test("arbitrary input never throws but LuaBail", () => {
    fc.assert(
      fc.property(fc.oneof(msgpackText, bytesString(80)), (text) => {
        const values = outcome(() => cmsgpackUnpack(text));
        if (values !== BAIL) outcome(() => cmsgpackPack(values));
      }),
      { numRuns: 3000 },
    );
    // A long run of values and deep nesting: the stack bound bails, never overflows.
    expect(outcome(() => cmsgpackUnpack(`${"\x91".repeat(5000)}\x01`))).toBe(BAIL);
    expect(outcome(() => cmsgpackUnpack("\x01".repeat(10000)))).toBe(BAIL);
    expect(outcome(() => cmsgpackUnpack(bytes(0xdd, 0xff, 0xff, 0xff, 0xff)))).toBe(BAIL);
  });
});
