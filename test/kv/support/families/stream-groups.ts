/**
 * Streams' consumer groups with several clients — A and C speak RESP2, B RESP3 — each a consumer
 * that may block: XREADGROUP with '>' or an ID, COUNT, NOACK and BLOCK 0 (served by an XADD, or
 * ended by XGROUP DESTROY, DEL, CLIENT UNBLOCK), XADD with IDs that go up, XACK, XPENDING summary
 * and extended (with IDLE 0 and a consumer), XCLAIM and XAUTOCLAIM with their options, XGROUP
 * CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER, XINFO STREAM [FULL]/GROUPS/CONSUMERS, and
 * wrong arities and bad arguments (test/kv/commands/stream/stream-differential.test.ts generates single-client
 * stream commands in depth). The state compared after a sequence: the stream, XINFO GROUPS and
 * each group's consumers and pending entries.
 *
 * What is normalised, and why: times (idle, seen-time, delivery-time and the like) are the
 * clock's — idle times become "<ms>" and Unix times "<time>".
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, lit, type Step } from "../duet.ts";
import type { RespClient, RespValue } from "../resp-client.ts";
import { show } from "../resp-client.ts";

const group = fc.constantFrom("g1", "g1", "g2");
const consumer = fc.constantFrom("c1", "c2", "c3");
const count = fc.constantFrom<string[]>([], [], ["COUNT", "1"], ["COUNT", "2"], ["COUNT", "0"], ["COUNT", "-1"]);
/** IDs the stream may hold (XADD below writes 1-1, 1-2, … in order). */
const id = fc.constantFrom("1-1", "1-2", "1-3", "1-4", "1-5", "0-0", "5-0", "abc");
const ids = fc.array(id, { minLength: 1, maxLength: 3 });

const xreadgroup = fc
  .tuple(
    group,
    consumer,
    count,
    fc.constantFrom<string[]>([], [], ["NOACK"]),
    fc.constantFrom<string[]>([], ["BLOCK", "0"], ["BLOCK", "0"]),
    fc.constantFrom(">", ">", "0", "1-2", "$"),
  )
  .map(([g, c, n, noack, block, from]) => ["XREADGROUP", "GROUP", g, c, ...n, ...noack, ...block, "STREAMS", "s", from]);
const groupCommands = fc.oneof(
  {
    weight: 3,
    arbitrary: cmd(
      lit("XGROUP"),
      lit("CREATE"),
      lit("s"),
      group,
      fc.constantFrom("$", "0", "1-2"),
      fc.constantFrom<string[]>([], ["MKSTREAM"], ["ENTRIESREAD", "1"]),
    ),
  },
  { weight: 2, arbitrary: cmd(lit("XGROUP"), lit("SETID"), lit("s"), group, fc.constantFrom("$", "0", "1-1", "abc")) },
  { weight: 1, arbitrary: cmd(lit("XGROUP"), lit("DESTROY"), lit("s"), group) },
  { weight: 1, arbitrary: cmd(lit("XGROUP"), fc.constantFrom("CREATECONSUMER", "DELCONSUMER"), lit("s"), group, consumer) },
  { weight: 3, arbitrary: cmd(lit("XACK"), lit("s"), group, ids) },
  {
    weight: 3,
    arbitrary: cmd(
      lit("XPENDING"),
      lit("s"),
      group,
      fc.constantFrom<string[]>(
        [],
        ["-", "+", "10"],
        ["IDLE", "0", "-", "+", "10"],
        ["-", "+", "10", "c1"],
        ["-", "+", "0"],
        ["IDLE", "-1", "-", "+", "1"],
        ["-", "+"],
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: cmd(
      lit("XCLAIM"),
      lit("s"),
      group,
      consumer,
      fc.constantFrom("0", "-1", "abc"),
      ids,
      fc.constantFrom<string[]>([], ["JUSTID"], ["RETRYCOUNT", "5"], ["FORCE"], ["LASTID", "1-9"], ["IDLE"]),
    ),
  },
  {
    weight: 2,
    arbitrary: cmd(
      lit("XAUTOCLAIM"),
      lit("s"),
      group,
      consumer,
      lit("0"),
      fc.constantFrom("0", "1-2", "abc"),
      count,
      fc.constantFrom<string[]>([], ["JUSTID"]),
    ),
  },
  {
    weight: 2,
    arbitrary: cmd(
      lit("XINFO"),
      fc.constantFrom<string[]>(
        ["GROUPS", "s"],
        ["CONSUMERS", "s", "g1"],
        ["CONSUMERS", "s", "nogroup"],
        ["STREAM", "s"],
        ["STREAM", "s", "FULL"],
        ["STREAM", "s", "FULL", "COUNT", "1"],
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<string[]>(
      ["DEL", "s"],
      ["SET", "s", "str"],
      ["XTRIM", "s", "MAXLEN", "1"],
      ["XDEL", "s", "1-1"],
      ["XGROUP", "CREATE", "s"],
      ["XREADGROUP", "GROUP", "g1", "c1", "STREAMS", "s"],
      ["XACK", "s"],
    ),
  },
);

const client = fc.constantFrom("A", "B", "C");
/** Steps with XADDs numbered in order, so that every ID is explicit and goes up. */
export const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: by(client, xreadgroup) },
      { weight: 4, arbitrary: by(client, fc.constant(["XADD"])) },
      { weight: 6, arbitrary: by(client, groupCommands) },
      {
        weight: 1,
        arbitrary: by(
          client,
          fc.constantFrom(["CLIENT", "UNBLOCK", "<id:A>"], ["CLIENT", "UNBLOCK", "<id:B>", "ERROR"], ["CLIENT", "UNBLOCK", "<id:C>", "TIMEOUT"]),
        ),
      },
    ),
    { minLength: 1, maxLength: 20 },
  )
  .map((raw) => {
    // One entry, and g1 either before it or at its end (then '>' blocks until the next XADD).
    const setup: Step[] = [
      { client: "A", argv: ["XADD", "s", "1-1", "f", "v1"] },
      { client: "A", argv: ["XGROUP", "CREATE", "s", "g1", raw.length % 2 === 0 ? "0" : "$"] },
    ];
    let seq = 1;
    return [...setup, ...raw.map((s) => (s.argv[0] === "XADD" ? { client: s.client, argv: ["XADD", "s", `1-${++seq}`, "f", `v${seq}`] } : s))];
  });

const idleKeys = new Set(["idle", "seen-time", "active-time", "inactive"]);
/** A Unix time in ms: anything past 2001 (1e12 ms). */
const isUnixMs = (v: RespValue) => typeof v === "bigint" && v > 1_000_000_000_000n;

/** Times become placeholders: idle fields by name, XPENDING's idle by place, Unix times by size. */
export function withoutTimes(argv: string[], reply: RespValue): RespValue {
  const word = argv[0]?.toUpperCase();
  const walk = (v: RespValue, parentKey?: RespValue): RespValue => {
    if (isUnixMs(v)) return "<time>";
    if (typeof v === "bigint" && typeof parentKey === "string" && idleKeys.has(parentKey)) return "<ms>";
    if (Array.isArray(v)) {
      // XPENDING's extended rows: [id, consumer, idle, deliveries].
      if (word === "XPENDING" && v.length === 4 && typeof v[0] === "string" && typeof v[2] === "bigint" && typeof v[3] === "bigint")
        return [v[0], v[1]!, "<ms>", v[3]];
      return v.map((item, i) => walk(item, i % 2 === 1 ? v[i - 1] : undefined));
    }
    if (v !== null && typeof v === "object") {
      if ("map" in v) return { map: v.map.map((item, i) => walk(item, i % 2 === 1 ? v.map[i - 1] : undefined)) };
      if ("set" in v) return { set: v.set.map((item) => walk(item)) };
      if ("push" in v) return { push: v.push.map((item) => walk(item)) };
    }
    return v;
  };
  return walk(reply);
}

async function groupLines(c: RespClient): Promise<string[]> {
  const out = [`stream ${show(await c.call("XRANGE", "s", "-", "+"))}`];
  const groups = await c.call("XINFO", "GROUPS", "s");
  out.push(`groups ${show(withoutTimes(["XINFO"], groups))}`);
  for (const g of ["g1", "g2"]) {
    out.push(`${g} consumers ${show(withoutTimes(["XINFO"], await c.call("XINFO", "CONSUMERS", "s", g)))}`);
    out.push(`${g} pending ${show(withoutTimes(["XPENDING"], await c.call("XPENDING", "s", g, "-", "+", "100")))}`);
  }
  return out;
}

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 3 },
    { name: "C", protocol: 2 },
  ],
  mayBlock: (argv) => argv[0] === "XREADGROUP" && argv.includes("BLOCK"),
  normalise: withoutTimes,
  snapshot: groupLines,
};
