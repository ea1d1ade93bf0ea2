// The append-only file rewrite's walk, driven step by step in process: whatever writes land
// between its steps (keys before and after the walk's position, keys it has not reached being
// deleted or created, the table growing under it or emptying enough to shrink), the new file
// replays to exactly the data the engine holds, in svc. (aof.test.ts checks the same under real
// concurrency against real processes, and that redis-server loads the result.)
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { createLogger } from "../../../src/core/log.ts";
import { AppendLog } from "../../../src/kv/aof/append-log.ts";
import { loadAppendLog } from "../../../src/kv/aof/load.ts";
import { itemsPerStep } from "../../../src/kv/aof/rewrite.ts";
import { type Harness, harness } from "../harness.ts";
import { tempDir } from "../../support/temp-dir.ts";

const silent = createLogger({ level: "silent" });
const databases = 3;
/**
 * Keys databases 0 and 1 start with: a table of 4096 slots, which grows at 2048 keys. Database 2
 * starts with a few, in a table the walk takes in one step.
 */
const initialKeys = 1200;
const smallDbKeys = 5;
/** Keys one "grow" adds: enough to make a table of initialKeys grow. */
const growKeys = 1500;

/** A "drop" deletes the initial keys but every hundredth: enough for the table to shrink if it may. */
type Op = { walk: number } | { db: number; argv: string[] } | { db: number; grow: true } | { db: number; drop: true };

const db = fc.integer({ min: 0, max: databases - 1 });
const initial = fc.integer({ min: 0, max: initialKeys - 1 }).map((i) => `i${i}`);
const value = fc.constantFrom("1", "v", "x".repeat(100));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }).map((walk) => ({ walk })) },
  { weight: 6, arbitrary: fc.tuple(db, initial, value).map(([db, k, v]) => ({ db, argv: ["SET", k, v] })) },
  { weight: 2, arbitrary: fc.tuple(db, initial).map(([db, k]) => ({ db, argv: ["INCR", k] })) },
  { weight: 2, arbitrary: fc.tuple(db, initial).map(([db, k]) => ({ db, argv: ["DEL", k] })) },
  { weight: 2, arbitrary: fc.tuple(db, initial).map(([db, k]) => ({ db, argv: ["PEXPIRE", k, "100000"] })) },
  { weight: 2, arbitrary: fc.tuple(db, fc.integer({ min: 0, max: 9 }), value).map(([db, i, v]) => ({ db, argv: ["RPUSH", `list${i}`, v] })) },
  { weight: 1, arbitrary: fc.tuple(db, fc.integer({ min: 0, max: 9 })).map(([db, i]) => ({ db, argv: ["LPOP", `list${i}`] })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(db, fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 3 }))
      .map(([db, i, f]) => ({ db, argv: ["HINCRBY", `hash${i}`, `f${f}`, "1"] })),
  },
  { weight: 1, arbitrary: db.map((db) => ({ db, grow: true as const })) },
  { weight: 1, arbitrary: db.map((db) => ({ db, drop: true as const })) },
);

/** A flat field, value, field, value… reply as an object (whose key order toEqual ignores). */
function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/** A Bloom filter's whole BF.SCANDUMP: its header and every chunk of its bits. */
function bloomDump(h: Harness, key: string): unknown[] {
  const chunks: unknown[] = [];
  for (let iterator = 0; ; ) {
    const [next, data] = h.run("BF.SCANDUMP", key, iterator) as [number, string];
    if (next === 0) return chunks;
    chunks.push(data);
    iterator = next;
  }
}

/** Every key of every database with its type, content and whether it expires. */
function snapshot(h: Harness): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let index = 0; index < databases; index++) {
    h.run("SELECT", index);
    for (const key of (h.run("KEYS", "*") as string[]).sort()) {
      const type = h.run("TYPE", key) as string;
      const content: Record<string, () => unknown> = {
        string: () => h.run("GET", key),
        list: () => h.run("LRANGE", key, 0, -1),
        // A large hash's order is its table's, which depends on the order fields were added in.
        hash: () => pairs(h.run("HGETALL", key) as string[]),
        set: () => (h.run("SMEMBERS", key) as string[]).sort(),
        zset: () => h.run("ZRANGE", key, 0, -1, "WITHSCORES"),
        "MBbloom--": () => bloomDump(h, key),
      };
      out[`${index}:${key}`] = { type, value: content[type]!(), expires: (h.run("PTTL", key) as number) >= 0 };
    }
  }
  h.run("SELECT", 0);
  return out;
}

/** An engine logging to a new file in `dir`, with its initial strings and a few lists and hashes per database. */
function filledEngine(dir: string): Harness {
  const h = harness(databases);
  h.engine.aof = new AppendLog(join(dir, "appendonly.aof"), "no", 0);
  for (let index = 0; index < databases; index++) {
    h.run("SELECT", index);
    for (let i = 0; i < (index === 2 ? smallDbKeys : initialKeys); i++) h.run("SET", `i${i}`, `${index}-${i}`);
    for (let i = 0; i < 10; i += 2) h.run("RPUSH", `list${i}`, "a", "b");
    for (let i = 0; i < 10; i += 3) h.run("HSET", `hash${i}`, "f0", "7");
  }
  h.run("SELECT", 0);
  return h;
}

/** Runs `ops` against a rewrite started on a filled engine; returns the engine's data and the new file's. */
async function rewriteUnder(ops: Op[]): Promise<{ held: Record<string, unknown>; replayed: Record<string, unknown>; capacities: number[] }> {
  const dir = tempDir("svc-aof-walk-");
  const h = filledEngine(dir);
  expect(h.engine.startRewrite()).toBe(true);
  const rewrite = h.engine.rewrite!;
  const capacities: number[] = [];
  let grown = 0;
  for (const o of ops) {
    if ("walk" in o) {
      for (let i = 0; i < o.walk; i++) rewrite.walkStep();
      continue;
    }
    h.run("SELECT", o.db);
    if ("argv" in o) h.run(...o.argv);
    else if ("grow" in o) {
      const pairs: string[] = [];
      for (let i = 0; i < growKeys; i++) pairs.push(`g${grown++}`, "new");
      h.run("MSET", ...pairs);
    } else h.run("DEL", ...Array.from({ length: initialKeys }, (_, i) => `i${i}`).filter((_, i) => i % 100 !== 0));
    capacities.push(h.engine.dbs[o.db]!.table.capacity);
  }
  h.run("SELECT", 0);
  // The rest of the walk runs in its slices, between turns of the event loop.
  while (h.engine.rewrite !== null) await new Promise((resolve) => setImmediate(resolve));
  await h.engine.aof!.close();
  const again = harness(databases);
  loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
  return { held: snapshot(h), replayed: snapshot(again), capacities };
}

describe("the rewrite's walk in slot order", () => {
  test("writes between its steps, growth and would-be shrinking: the new file replays to the data held", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        const { held, replayed } = await rewriteUnder(ops);
        expect(replayed).toEqual(held);
      }),
      { numRuns: 40, endOnFailure: true },
    );
  }, 120_000);

  test("a table about to grow is walked to its end first; one emptied mid-walk keeps its slots until the walk is over", async () => {
    // Database 0: two steps of sixteen walked, then it grows, which finishes its walk: the walk is
    // then at database 1, which is emptied, walked a step, and emptied again.
    const { held, replayed, capacities } = await rewriteUnder([
      { walk: 2 },
      { db: 0, argv: ["SET", "i5", "changed"] },
      { db: 0, grow: true },
      { db: 1, drop: true },
      { walk: 1 },
      { db: 1, drop: true },
    ]);
    expect(replayed).toEqual(held);
    expect(capacities[1]).toBe(8192); // grew
    // Database 1 is down to 21 keys: below an eighth of 4096 slots, but the walk holds its size.
    expect(capacities.slice(2)).toEqual([4096, 4096]);
    expect(held["0:i5"]).toEqual({ type: "string", value: "changed", expires: false });
  });
});

describe("a table resizing when the walk reaches it", () => {
  test("is moved to its new slots a step at a time, not at once, then walked; the file replays to the data held", async () => {
    const dir = tempDir("svc-aof-walk-");
    const h = filledEngine(dir);
    // Database 1 holds 1,209 keys in 4,096 slots; 2,888 more start a growth from 8,192 slots to
    // 16,384 with its last key, which leaves every key in the old slots.
    h.run("SELECT", 1);
    h.run("MSET", ...Array.from({ length: 2888 }, (_, i) => [`r${i}`, "v"]).flat());
    const table = h.engine.dbs[1]!.table;
    expect(table.resizing).toBe(true);
    expect(table.capacity).toBe(16_384);
    expect(h.engine.startRewrite()).toBe(true);
    const rewrite = h.engine.rewrite!;
    // Database 0's 4,096 slots take 16 steps of 256; then two steps of 4,096 old slots each.
    let steps = 0;
    while (table.resizing) {
      rewrite.walkStep();
      steps++;
      if (steps === 17) h.run("SET", "r1", "changed"); // a change between the resize's steps
    }
    expect(steps).toBe(18);
    h.run("SELECT", 0);
    while (h.engine.rewrite !== null) await new Promise((resolve) => setImmediate(resolve));
    await h.engine.aof!.close();
    const again = harness(databases);
    loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
    const held = snapshot(h);
    expect(snapshot(again)).toEqual(held);
    expect(held["1:r1"]).toEqual({ type: "string", value: "changed", expires: false });
    expect(Object.keys(held).filter((k) => k.startsWith("1:")).length).toBe(1209 + 2888);
  });
});

describe("after the walk, while the snapshot syncs off the JavaScript thread", () => {
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  test("writes served meanwhile are in the new file", async () => {
    const dir = tempDir("svc-aof-walk-");
    const h = filledEngine(dir);
    expect(h.engine.startRewrite()).toBe(true);
    while (h.engine.rewrite!.walkStep());
    // The walk's next slice finds it over and starts the sync; writes go on until the switch.
    let written = 0;
    for (; h.engine.rewrite !== null; written++) {
      await nextTurn();
      h.run("SET", `during${written}`, String(written));
      h.run("RPUSH", "list0", `x${written}`);
    }
    expect(written).toBeGreaterThan(1);
    await h.engine.aof!.close();
    const again = harness(databases);
    loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
    expect(snapshot(again)).toEqual(snapshot(h));
  });

  test("a log closed meanwhile (shutdown) keeps its own file, whole, and the new one is removed", async () => {
    const dir = tempDir("svc-aof-walk-");
    const h = filledEngine(dir);
    expect(h.engine.startRewrite()).toBe(true);
    while (h.engine.rewrite!.walkStep());
    await nextTurn(); // the walk's slice: the sync is now in flight, its answer not yet in
    expect(h.engine.rewrite).not.toBeNull();
    h.run("SET", "last", "write");
    await h.engine.aof!.close();
    while (h.engine.rewrite !== null) await nextTurn();
    expect(readdirSync(dir)).toEqual(["appendonly.aof"]);
    const again = harness(databases);
    loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
    expect(snapshot(again)).toEqual(snapshot(h));
    expect(again.run("GET", "last")).toBe("write");
  });
});

/** How each kind of collection is filled and changed, for the tests of one written in parts. */
interface Kind {
  /** One command adding `items` (its arguments after the key). */
  fill(items: string[]): string[];
  /** Commands that change "long" (and a few that do not), for the property. */
  commands: string[][];
}

const kinds: Record<string, Kind> = {
  list: {
    fill: (items) => ["RPUSH", ...items],
    commands: [
      ["LPUSH", "long", "head"],
      ["RPUSH", "long", "tail"],
      ["LPOP", "long"],
      ["RPOP", "long", "2"],
      ["LSET", "long", "70000", "changed"],
      ["LTRIM", "long", "1", "-2"],
      ["LLEN", "long"],
    ],
  },
  hash: {
    fill: (items) => ["HSET", ...items.flatMap((item) => [`f${item}`, item])],
    commands: [
      ["HSET", "long", "f0:5", "changed", "new", "1"],
      ["HDEL", "long", "f0:7", "f1:7", "f0:70000"],
      ["HLEN", "long"],
      // New fields counted up: some land in slots the walk has not reached, and were they read
      // live rather than copied, the new file would count them twice.
      ...Array.from({ length: 24 }, (_, i) => ["HINCRBY", "long", `counter${i}`, "2"]),
    ],
  },
  set: {
    fill: (items) => ["SADD", ...items],
    commands: [
      ["SADD", "long", "new", "0:1"],
      ["SREM", "long", "0:3", "1:3", "0:99999"],
      ["SPOP", "long", "2"],
      ["SCARD", "long"],
      // Members moved out: read live, the ones the walk had not reached would be missing from the
      // new file's "long", and the SMOVEs replayed after it would find nothing to move.
      ...Array.from({ length: 12 }, (_, i) => ["SMOVE", "long", "other", `${i % 2}:${100 + i}`]),
    ],
  },
  zset: {
    fill: (items) => ["ZADD", ...items.flatMap((item, i) => [String(i % 1000), item])],
    commands: [
      ["ZADD", "long", "-1", "0:5", "5.5", "new"],
      ["ZREM", "long", "0:3", "1:3"],
      ["ZINCRBY", "long", "2", "1:10"],
      ["ZPOPMIN", "long"],
      ["ZREMRANGEBYRANK", "long", "100", "200"],
      ["ZCARD", "long"],
    ],
  },
};

/** Commands any collection's test applies to "long": remove it, move it, expire it, or touch another key. */
const anyKindCommands: string[][] = [
  ["DEL", "long"],
  ["RENAME", "long", "moved"],
  ["PEXPIRE", "long", "100000"],
  ["SET", "i1", "x"],
];

for (const [kindName, kind] of Object.entries(kinds)) {
  describe(`a ${kindName} larger than a step writes`, () => {
    /** Items of the large collection: three steps' worth and a bit. */
    const longItems = 3 * itemsPerStep + 100;
    const longCommand = fc.tuple(fc.integer({ min: 0, max: 1 }), fc.constantFrom<string[]>(...kind.commands, ...anyKindCommands));

    /** An engine whose databases 0 and 1 each hold a large collection under "long". */
    function withLongCollections(dir: string): Harness {
      const h = filledEngine(dir);
      for (const index of [0, 1]) {
        h.run("SELECT", index);
        for (let i = 0; i < longItems; i += 10_000) {
          const items = Array.from({ length: Math.min(10_000, longItems - i) }, (_, j) => `${index}:${i + j}`);
          const [command, ...rest] = kind.fill(items);
          h.run(command!, "long", ...rest);
        }
      }
      h.run("SELECT", 0);
      return h;
    }

    async function replayed(h: Harness, dir: string): Promise<Record<string, unknown>> {
      while (h.engine.rewrite !== null) await new Promise((resolve) => setImmediate(resolve));
      await h.engine.aof!.close();
      const again = harness(databases);
      loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
      return snapshot(again);
    }

    test("changed while it is being written, it replays as held", async () => {
      const dir = tempDir("svc-aof-walk-");
      const h = withLongCollections(dir);
      expect(h.engine.startRewrite()).toBe(true);
      const rewrite = h.engine.rewrite!;
      // Untouched until the walk has written its first part: a command before that would have it
      // written whole, ahead of the walk.
      while (rewrite.keyInParts === null) expect(rewrite.walkStep()).toBe(true);
      const { dbIndex, key } = rewrite.keyInParts;
      expect(key).toBe("long");
      h.run("SELECT", dbIndex);
      for (const argv of kind.commands) h.run(...argv);
      // The rest was copied out as it was before the first command, not written at once: it goes
      // on being written a step at a time.
      expect(rewrite.keyInParts).toEqual({ dbIndex, key: "long" });
      h.run("SELECT", 0);
      expect(await replayed(h, dir)).toEqual(snapshot(h));
    });

    test("left alone, it goes out about a step's worth of items at a time", () => {
      const h = withLongCollections(tempDir("svc-aof-walk-"));
      expect(h.engine.startRewrite()).toBe(true);
      const rewrite = h.engine.rewrite!;
      while (rewrite.keyInParts === null) expect(rewrite.walkStep()).toBe(true);
      // Its first step wrote about itemsPerStep items (a hash or a set: whole slots of its table,
      // so a few more); about three more write the rest, longItems being a bit over three steps'
      // worth. A list or sorted set takes exactly three.
      let steps = 0;
      while (rewrite.keyInParts !== null) {
        rewrite.walkStep();
        steps++;
      }
      if (kindName === "list" || kindName === "zset") expect(steps).toBe(3);
      else expect(steps === 2 || steps === 3).toBe(true);
    });

    test("goes out over several steps; a command on it between them finds it written as it was", async () => {
      await fc.assert(
        // One step of the walk before each command: a command on a large collection the walk has
        // not reached has it written whole, ahead; one on a collection the walk is writing has
        // the rest written first; one after has nothing to do.
        fc.asyncProperty(fc.array(longCommand, { minLength: 1, maxLength: 45 }), async (commands) => {
          const dir = tempDir("svc-aof-walk-");
          const h = withLongCollections(dir);
          expect(h.engine.startRewrite()).toBe(true);
          const rewrite = h.engine.rewrite!;
          for (const [index, argv] of commands) {
            rewrite.walkStep();
            h.run("SELECT", index);
            h.run(...argv);
          }
          h.run("SELECT", 0);
          expect(await replayed(h, dir)).toEqual(snapshot(h));
        }),
        { numRuns: kindName === "list" ? 25 : 10, endOnFailure: true },
      );
    }, 120_000);
  });
}

describe("several large collections", () => {
  test("homed in one step of the walk, or written ahead of it, every one is written whole", async () => {
    const dir = tempDir("svc-aof-walk-");
    const h = harness(databases);
    h.engine.aof = new AppendLog(join(dir, "appendonly.aof"), "no", 0);
    // 12 keys in a table of a few dozen slots: one step of the walk (256 slots) takes them all.
    const items = (tag: string) => Array.from({ length: itemsPerStep + 50 }, (_, i) => `${tag}:${i}`);
    for (let i = 0; i < 3; i++) {
      h.run("RPUSH", `list${i}`, ...items(`l${i}`));
      h.run("SADD", `set${i}`, ...items(`s${i}`));
      h.run("HSET", `hash${i}`, ...items(`h${i}`).flatMap((f) => [f, "v"]));
      h.run("ZADD", `zset${i}`, ...items(`z${i}`).flatMap((m, j) => [String(j), m]));
    }
    expect(h.engine.startRewrite()).toBe(true);
    const rewrite = h.engine.rewrite!;
    // Two of them are changed before the walk reaches them: written ahead, as they are then.
    h.run("RPUSH", "list2", "late");
    h.run("SREM", "set1", "s1:0");
    rewrite.walkStep();
    h.run("HSET", "hash0", "h0:1", "changed");
    while (h.engine.rewrite !== null) await new Promise((resolve) => setImmediate(resolve));
    await h.engine.aof!.close();
    const again = harness(databases);
    loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
    expect(snapshot(again)).toEqual(snapshot(h));
  });
});

describe("a Bloom filter larger than a step", () => {
  test("goes out in parts; added to while it is being written, it replays as held", async () => {
    const dir = tempDir("svc-aof-walk-");
    const h = filledEngine(dir);
    // ~2.3 MiB of bits: a step writes ~1 MiB of them.
    h.run("BF.RESERVE", "bloom", "0.01", "2000000", "NONSCALING");
    h.run("BF.MADD", "bloom", ...Array.from({ length: 3000 }, (_, i) => `before${i}`));
    expect(h.engine.startRewrite()).toBe(true);
    const rewrite = h.engine.rewrite!;
    while (rewrite.keyInParts?.key !== "bloom") expect(rewrite.walkStep()).toBe(true);
    h.run("BF.MADD", "bloom", ...Array.from({ length: 3000 }, (_, i) => `during${i}`));
    // The rest was copied before the additions; it goes on being written a step at a time.
    expect(rewrite.keyInParts).toEqual({ dbIndex: 0, key: "bloom" });
    while (h.engine.rewrite !== null) await new Promise((resolve) => setImmediate(resolve));
    await h.engine.aof!.close();
    const again = harness(databases);
    loadAppendLog(again.engine, join(dir, "appendonly.aof"), silent);
    expect(snapshot(again)).toEqual(snapshot(h));
    expect(again.run("BF.EXISTS", "bloom", "during7")).toBe(1);
  });
});
