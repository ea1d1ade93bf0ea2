// HyperLogLogs against redis-server 7.0: generated PFADD/PFCOUNT/PFMERGE sequences (small adds,
// adds of thousands of elements, unions, wrong-type keys, hll-sparse-max-bytes changes that move
// the sparse → dense switch) must get identical replies, and GET of every key afterwards must be
// byte-identical. HLL bytes cross between the servers in both directions, and HLLs with flipped
// bytes, cut or extended tails must get the same replies (errors included) from both.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type RespClient, type RespValue, show } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const heavy = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000;
const runs = heavy ? 300 : 60;

/** redis-server and svc kv with one client each, up from before the first test until after the last. */
const servers = redisAndKvWithClients();

// ---- generators -----------------------------------------------------------------------------------

const hllKeys = ["h1", "h2", "h3"];
const allKeys = [...hllKeys, "str", "list", "missing"];
const hllKey = fc.constantFrom(...hllKeys);
const anyKey = fc.oneof({ weight: 5, arbitrary: hllKey }, { weight: 1, arbitrary: fc.constantFrom("str", "list", "missing") });
/** Latin1 strings: every byte value, as element bytes. */
const binary = fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b).toString("latin1"));
const element = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 3000 }).map((n) => `e${n}`) }, { weight: 1, arbitrary: binary });
/** Thousands of elements at once, from one of a few overlapping families, so unions mean something. */
const bulk = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 50, max: 6000 }))
  .map(([family, n]) => Array.from({ length: n }, (_, i) => `f${family}:${i}`));
const sparseLimit = fc.constantFrom("0", "20", "40", "100", "300", "1000", "3000", "20000");

const cmd = (...parts: fc.Arbitrary<string | string[]>[]) => fc.tuple(...parts).map((p) => p.flat());
const lit = (s: string) => fc.constant(s);

const command: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 8, arbitrary: cmd(lit("PFADD"), anyKey, fc.array(element, { maxLength: 8 })) },
  { weight: 2, arbitrary: cmd(lit("PFADD"), hllKey, bulk) },
  { weight: 5, arbitrary: cmd(lit("PFCOUNT"), anyKey) },
  { weight: 3, arbitrary: cmd(lit("PFCOUNT"), fc.array(anyKey, { minLength: 2, maxLength: 4 })) },
  { weight: 3, arbitrary: cmd(lit("PFMERGE"), anyKey, fc.array(anyKey, { maxLength: 3 })) },
  { weight: 3, arbitrary: cmd(lit("GET"), hllKey) },
  { weight: 2, arbitrary: cmd(lit("PFDEBUG"), fc.constantFrom("ENCODING", "DECODE", "TODENSE"), anyKey) },
  { weight: 1, arbitrary: cmd(lit("CONFIG"), lit("SET"), lit("hll-sparse-max-bytes"), sparseLimit) },
  { weight: 1, arbitrary: cmd(lit("DEL"), hllKey) },
  { weight: 1, arbitrary: cmd(lit("APPEND"), hllKey, fc.constantFrom("", "x")) },
);

/**
 * A command between WATCH and EXEC: EXEC fails when it counted as a write to the watched key —
 * PFADD that changed a register, PFCOUNT that wrote the cache — and not otherwise.
 */
const watched: fc.Arbitrary<string[][]> = fc.tuple(hllKey, command).map(([key, c]) => [["WATCH", key], c, ["MULTI"], ["PING"], ["EXEC"]]);
const step = fc.oneof({ weight: 6, arbitrary: command.map((c) => [c]) }, { weight: 1, arbitrary: watched });

/** Every key's value at the end, as each server holds it. */
const finalReads = allKeys.map((key) => ["GET", key]);
const setup = [["FLUSHALL"], ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"], ["SET", "str", "not an hll"], ["RPUSH", "list", "a"]];

// ---- running ----------------------------------------------------------------------------------------

const brief = (argv: string[]) => JSON.stringify(argv.length > 8 ? [...argv.slice(0, 8), `... (${argv.length} args)`] : argv);

async function runBoth(commands: string[][]): Promise<RespValue[]> {
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(commands), servers.kvClient.pipeline(commands)]);
  for (let i = 0; i < commands.length; i++) {
    if (show(expected[i]!) === show(actual[i]!)) continue;
    throw new Error(`reply ${i} differs for ${brief(commands[i]!)}\n  redis: ${show(expected[i]!).slice(0, 600)}\n  svc:   ${show(actual[i]!).slice(0, 600)}`);
  }
  return expected;
}

/** An HLL as `client` makes it: PFADD of n elements under the given sparse limit. */
async function makeHll(client: RespClient, key: string, elements: string[], sparseMax: string): Promise<string> {
  const replies = await client.pipeline([
    ["CONFIG", "SET", "hll-sparse-max-bytes", sparseMax],
    ["DEL", key],
    ["PFADD", key, ...elements],
    ["GET", key],
    ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
  ]);
  return replies[3] as string;
}

/** Changes to a valid HLL's bytes: bit flips (mostly after the magic), cut or extended tails. */
const damage = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 3 })
      .map((flips) => ({ flips, cut: 0, extra: "" })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((cut) => ({ flips: [] as [number, number][], cut, extra: "" })) },
  { weight: 1, arbitrary: binary.map((extra) => ({ flips: [] as [number, number][], cut: 0, extra })) },
);

function damaged(bytes: string, how: { flips: [number, number][]; cut: number; extra: string }): string {
  const b = Buffer.from(bytes, "latin1");
  for (const [where, bit] of how.flips) {
    // Three flips in four land past the 16-byte header, where the registers are.
    const at = where < 0.75 ? 16 + Math.floor(((where / 0.75) * (b.length - 16)) % (b.length - 16)) : Math.floor(((where - 0.75) / 0.25) * 16) % 16;
    b[at]! ^= 1 << bit;
  }
  return b.subarray(0, b.length - Math.min(how.cut, b.length)).toString("latin1") + how.extra;
}

describe("HyperLogLog against redis-server", () => {
  test("generated PF* sequences get identical replies and leave byte-identical values", async () => {
    // What the runs reached, so a generator change that stops reaching dense HLLs fails loudly.
    const seen = { sparse: 0, dense: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async (steps) => {
        const replies = await runBoth([...setup, ...steps.flat(), ...finalReads]);
        for (const value of replies.slice(-finalReads.length)) {
          if (typeof value === "string" && value.startsWith("HYLL")) seen[value.charCodeAt(4) === 1 ? "sparse" : "dense"]++;
        }
      }),
      { numRuns: runs, endOnFailure: true },
    );
    expect(seen.sparse).toBeGreaterThan(0);
    expect(seen.dense).toBeGreaterThan(0);
  }, 120_000);

  test("HLL bytes made by either server work the same on the other", async () => {
    await fc.assert(
      fc.asyncProperty(bulk, fc.constantFrom("3000", "200"), fc.array(element, { maxLength: 5 }), async (elements, sparseMax, more) => {
        const fromRedis = await makeHll(servers.redisClient, "made", elements, sparseMax);
        const fromKv = await makeHll(servers.kvClient, "made", elements, sparseMax);
        if (fromRedis !== fromKv) throw new Error(`PFADD of ${elements.length} elements made different bytes`);
        for (const bytes of [fromRedis, fromKv]) {
          await runBoth([
            ["FLUSHALL"],
            ["SET", "a", bytes],
            ["SET", "b", bytes],
            ["PFCOUNT", "a"],
            ["GET", "a"],
            ["PFADD", "b", ...more],
            ["PFCOUNT", "a", "b"],
            ["PFMERGE", "c", "a", "b"],
            ["PFDEBUG", "ENCODING", "c"],
            ["GET", "b"],
            ["GET", "c"],
            ["PFCOUNT", "c"],
          ]);
        }
      }),
      { numRuns: heavy ? 40 : 8, endOnFailure: true },
    );
  }, 120_000);

  test("corrupted HLLs get the same replies and errors as from Redis", async () => {
    const sizes = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 41, max: 3000 }));
    await fc.assert(
      fc.asyncProperty(sizes, damage, fc.array(element, { minLength: 1, maxLength: 6 }), async (n, how, more) => {
        const valid = await makeHll(
          servers.redisClient,
          "made",
          Array.from({ length: n }, (_, i) => `c${i}`),
          "3000",
        );
        const bad = damaged(valid, how);
        await runBoth([
          ["FLUSHALL"],
          ["SET", "bad", bad],
          ["SET", "bad2", bad],
          ["SET", "bad3", bad],
          ["PFADD", "good", "x", "y"],
          ["PFCOUNT", "bad"],
          ["GET", "bad"],
          ["PFCOUNT", "bad", "good"],
          ["PFDEBUG", "DECODE", "bad"],
          ["PFADD", "bad2", ...more],
          ["GET", "bad2"],
          ["PFCOUNT", "bad2"],
          ["PFMERGE", "dest", "good", "bad3"],
          ["GET", "dest"],
          ["GET", "bad3"],
          ["PFMERGE", "bad3", "good"],
          ["GET", "bad3"],
          ["PFDEBUG", "TODENSE", "bad"],
          ["GET", "bad"],
        ]);
      }),
      { numRuns: heavy ? 400 : 60, endOnFailure: true },
    );
  }, 120_000);

  test("hand-made sparse opcode lists (non-canonical, short, long, cut) behave as in Redis", async () => {
    const opcode = fc.oneof(
      fc.integer({ min: 1, max: 64 }).map((run) => [run - 1]),
      fc.integer({ min: 1, max: 16384 }).map((run) => [0x40 | ((run - 1) >> 8), (run - 1) & 0xff]),
      fc.tuple(fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 4 })).map(([value, run]) => [0x80 | ((value - 1) << 2) | (run - 1)]),
    );
    /**
     * Opcodes, then (usually) zeros filling up to exactly 16384 registers so the HLL is valid;
     * sometimes the last byte is cut, leaving half an XZERO that reads the byte past the end.
     */
    const sparse = fc
      .tuple(fc.array(opcode, { maxLength: 60 }), fc.boolean(), fc.boolean(), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 4 }))
      .map(([ops, fill, cacheValid, cacheByte, cut]) => {
        const bytes = [0x48, 0x59, 0x4c, 0x4c, 1, 0, 0, 0, cacheByte, 0, 0, 0, 0, 0, 0, cacheValid ? 0 : 0x80, ...ops.flat()];
        let covered = 0;
        for (let p = 16; p < bytes.length; p++) {
          const op = bytes[p]!;
          if ((op & 0xc0) === 0) covered += (op & 0x3f) + 1;
          else if ((op & 0xc0) === 0x40) covered += (((op & 0x3f) << 8) | (bytes[++p] ?? 0)) + 1;
          else covered += (op & 3) + 1;
        }
        for (let left = 16384 - covered; fill && left > 0; left -= Math.min(left, 16384)) {
          const run = Math.min(left, 16384);
          bytes.push(0x40 | ((run - 1) >> 8), (run - 1) & 0xff);
        }
        if (cut === 0 && bytes.length > 16) bytes.pop();
        return Buffer.from(bytes).toString("latin1");
      });
    await fc.assert(
      fc.asyncProperty(sparse, fc.array(element, { maxLength: 12 }), fc.constantFrom("3000", "60", "200"), async (bytes, more, sparseMax) => {
        await runBoth([
          ["FLUSHALL"],
          ["CONFIG", "SET", "hll-sparse-max-bytes", sparseMax],
          ["SET", "a", bytes],
          ["SET", "b", bytes],
          ["SET", "c", bytes],
          ["PFCOUNT", "a"],
          ["GET", "a"],
          ["PFDEBUG", "DECODE", "b"],
          ["PFADD", "b", ...more],
          ["GET", "b"],
          ["PFCOUNT", "b"],
          ["PFDEBUG", "DECODE", "b"],
          ["PFADD", "x", "p", "q"],
          ["PFMERGE", "x", "c"],
          ["GET", "x"],
          ["PFMERGE", "c", "x"],
          ["GET", "c"],
          ["PFCOUNT", "a", "x"],
          ["PFDEBUG", "GETREG", "a"],
          ["GET", "a"],
          ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
        ]);
      }),
      { numRuns: heavy ? 500 : 80, endOnFailure: true },
    );
  }, 120_000);

  test("arbitrary arguments to the PF* commands get the same replies", async () => {
    const word = fc.oneof(
      fc.constantFrom("h1", "h2", "str", "list", "missing", "GETREG", "DECODE", "ENCODING", "TODENSE", "getreg", "encoding\0x", "", "x"),
      binary,
    );
    // PFSELFTEST takes half a second on Redis: rarely, and at most once per batch (below).
    const name = fc.oneof(
      { weight: 30, arbitrary: fc.constantFrom("PFADD", "PFCOUNT", "PFMERGE", "PFDEBUG", "pfadd", "PfCount") },
      { weight: 1, arbitrary: fc.constant("PFSELFTEST") },
    );
    const call = fc.tuple(name, fc.array(word, { maxLength: 5 })).map(([n, args]) => [n, ...args]);
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 12 }), async (calls) => {
        const selfTests = calls.filter((c) => c[0] === "PFSELFTEST" && c.length === 1).length;
        const commands = selfTests > 1 ? calls.filter((c) => !(c[0] === "PFSELFTEST" && c.length === 1)) : calls;
        await runBoth([...setup, ["PFADD", "h1", "a", "b"], ...commands, ...finalReads]);
      }),
      { numRuns: heavy ? 200 : 30, endOnFailure: true },
    );
  }, 120_000);
});
