// The keyspace over its key table (src/kv/keyspace/keyspace.ts, src/kv/types/key-table.ts), through commands on an
// engine with a manual clock: values on both sides of the inline limits, reads that record their
// time, read-modify-writes in place and past an entry's size, expiry met by a write, and walks of
// the whole keyspace (SCAN, KEYS, RANDOMKEY, SWAPDB, FLUSHDB), and a resize finished by the
// active runs (src/kv/server/active-rehash.ts).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { activeRehashRun } from "../../../src/kv/server/active-rehash.ts";
import { activeExpireRun, type ExpireCursors } from "../../../src/kv/server/expire.ts";
import { keyInlineBytesMax, valueInlineBytesMax } from "../../../src/kv/types/key-table.ts";
import { harness } from "../harness.ts";

describe("keyspace", () => {
  test("the count of keys with a time is the number of entries holding one, whatever changes values, sizes and times", () => {
    // Values of several sizes move entries (an inline value growing, one held as an object);
    // every command here that touches a time is one the keyspace must keep the entry in step for.
    const key = fc.constantFrom("a", "b", "c", "k".repeat(300));
    const value = fc.constantFrom("1", "x".repeat(40), "y".repeat(200));
    const command = fc.oneof(
      fc.tuple(key, value).map(([k, v]) => ["SET", k, v]),
      fc.tuple(key, value).map(([k, v]) => ["SET", k, v, "KEEPTTL"]),
      fc.tuple(key, value, fc.integer({ min: 1, max: 50 })).map(([k, v, ms]) => ["SET", k, v, "PX", String(ms)]),
      fc.tuple(key, fc.integer({ min: -5, max: 50 })).map(([k, ms]) => ["PEXPIRE", k, String(ms)]),
      fc.tuple(key, value).map(([k, v]) => ["APPEND", k, v]),
      key.map((k) => ["INCR", k]),
      key.map((k) => ["PERSIST", k]),
      key.map((k) => ["DEL", k]),
      key.map((k) => ["GET", k]),
      fc.tuple(key, key).map(([k, to]) => ["RENAME", k, to]),
      fc.tuple(key, key).map(([k, to]) => ["COPY", k, to, "REPLACE"]),
      fc.tuple(key, fc.integer({ min: 1, max: 50 })).map(([k, ms]) => ["GETEX", k, "PX", String(ms)]),
      fc.integer({ min: 0, max: 30 }).map((ms) => ({ advance: ms })),
    );
    fc.assert(
      fc.property(fc.array(command, { maxLength: 40 }), (commands) => {
        const kv = harness();
        const db = kv.engine.dbs[0]!;
        for (const c of commands) {
          if ("advance" in c) kv.clock.advance(c.advance);
          else kv.run(...c);
          // The count of keys with a time is the number of entries holding one.
          expect(db.expiringCount).toBe(db.table.keys().filter((k) => db.table.expiresAt(db.table.find(k)) !== Infinity).length);
        }
      }),
    );
  });

  test("keys and values at and one past the inline limits read back whole", () => {
    const kv = harness();
    for (const keyLength of [1, keyInlineBytesMax, keyInlineBytesMax + 1]) {
      for (const valueLength of [0, valueInlineBytesMax, valueInlineBytesMax + 1, 100_000]) {
        const key = "k".repeat(keyLength);
        const value = "\u0000\u00ff\r\n".repeat(valueLength).slice(0, valueLength);
        expect(kv.run("SET", key, value)).toBe("OK");
        expect(kv.run("GET", key)).toBe(value);
        expect(kv.run("MGET", key, "missing")).toEqual([value, null]);
        expect(kv.run("STRLEN", key)).toBe(valueLength);
      }
    }
    expect(kv.run("DBSIZE")).toBe(3);
  });

  test("GET of a key holding another type is WRONGTYPE; MGET answers null for it", () => {
    const kv = harness();
    kv.run("RPUSH", "list", "a");
    expect(kv.run("GET", "list")).toEqual({ error: "WRONGTYPE Operation against a key holding the wrong kind of value" });
    expect(kv.run("MGET", "list")).toEqual([null]);
    kv.run("SETBIT", "bits", 7, 1); // a MutableString, held as an object
    expect(kv.run("GET", "bits")).toBe("\u0001");
  });

  test("INCR rewrites in place, grows past its entry, and refuses what is not an integer", () => {
    const kv = harness();
    kv.run("SET", "n", "9");
    expect(kv.run("INCR", "n")).toBe(10);
    expect(kv.run("INCRBY", "n", 999_999_999_990)).toBe(1_000_000_000_000);
    expect(kv.run("GET", "n")).toBe("1000000000000");
    expect(kv.run("DECRBY", "n", 2_000_000_000_000)).toBe(-1_000_000_000_000);
    kv.run("SET", "n", "9223372036854775806");
    expect(kv.run("INCR", "n")).toBe(Number(9223372036854775807n));
    expect(kv.run("INCR", "n")).toEqual({ error: "ERR increment or decrement would overflow" });
    for (const bad of ["", "-0", "007", " 1", "1.5", "x"]) {
      kv.run("SET", "s", bad);
      expect(kv.run("INCR", "s")).toEqual({ error: "ERR value is not an integer or out of range" });
      expect(kv.run("GET", "s")).toBe(bad);
    }
  });

  test("a write meeting an expired key does not inherit its time (SET KEEPTTL, INCR)", () => {
    const kv = harness();
    kv.run("SET", "k", "old", "PX", 100);
    kv.run("SET", "n", "5", "PX", 100);
    kv.clock.advance(101);
    expect(kv.run("SET", "k", "new", "KEEPTTL")).toBe("OK");
    expect(kv.run("PTTL", "k")).toBe(-1);
    expect(kv.run("INCR", "n")).toBe(1);
    expect(kv.run("PTTL", "n")).toBe(-1);
    expect(kv.run("GET", "k")).toBe("new");
  });

  test("a key lives through the millisecond of its time and is gone the next, as Redis's `now > when`", () => {
    const kv = harness();
    kv.run("SET", "k", "v", "PX", 100);
    kv.clock.advance(100);
    expect(kv.run("PTTL", "k")).toBe(0);
    expect(kv.run("GET", "k")).toBe("v");
    kv.clock.advance(1);
    expect(kv.run("GET", "k")).toBeNull();
    expect(kv.run("EXISTS", "k")).toBe(0);
  });

  test("a key whose time passes during a script stays until the script ends, as in Redis 7.0", () => {
    const kv = harness();
    kv.run("SET", "k", "v", "PX", 10);
    // DEBUG SLEEP is refused in scripts; a script's commands run on the harness's clock, which
    // only the test moves, so the clock is moved from inside the script by a command hook.
    const script = "local before = redis.call('EXISTS', KEYS[1]) redis.call('PING') return {before, redis.call('EXISTS', KEYS[1]), redis.call('GET', KEYS[1])}";
    const ping = kv.engine.commandNamed("ping")!;
    const run = ping.run!;
    ping.run = (x, argv) => {
      kv.clock.advance(50);
      run(x, argv);
    };
    try {
      expect(kv.run("EVAL", script, 1, "k")).toEqual([1, 1, "v"]);
    } finally {
      ping.run = run;
    }
    expect(kv.run("EXISTS", "k")).toBe(0);
  });

  test("INCR keeps a live key's time to live", () => {
    const kv = harness();
    kv.run("SET", "n", "5", "PX", 1000);
    expect(kv.run("INCR", "n")).toBe(6);
    expect(kv.run("PTTL", "n")).toBe(1000);
  });

  test("OBJECT IDLETIME counts from the last read, and from the database's creation before one", () => {
    const kv = harness();
    kv.clock.advance(5_000);
    kv.run("SET", "k", "v");
    expect(kv.run("OBJECT", "IDLETIME", "k")).toBe(5);
    kv.run("GET", "k");
    kv.clock.advance(3_000);
    expect(kv.run("OBJECT", "IDLETIME", "k")).toBe(3);
    kv.run("SET", "k", "a value long enough to move the entry to a larger size");
    expect(kv.run("OBJECT", "IDLETIME", "k")).toBe(3);
  });

  test("SCAN returns every key exactly once over a stable keyspace, in steps near COUNT", () => {
    const kv = harness();
    for (let i = 0; i < 1000; i++) kv.run("SET", `key:${i}`, "v");
    const seen: string[] = [];
    let cursor = "0";
    let calls = 0;
    do {
      const [next, keys] = kv.run("SCAN", cursor, "COUNT", 50) as [string, string[]];
      seen.push(...keys);
      cursor = next;
      calls++;
    } while (cursor !== "0");
    expect(seen.sort()).toEqual(Array.from({ length: 1000 }, (_, i) => `key:${i}`).sort());
    expect(calls).toBeGreaterThan(10);
  });

  test("SCAN MATCH and TYPE filter; expired keys are not returned", () => {
    const kv = harness();
    kv.run("SET", "a1", "v");
    kv.run("SET", "a2", "v", "PX", 10);
    kv.run("RPUSH", "a3", "x");
    kv.clock.advance(11);
    const [, keys] = kv.run("SCAN", 0, "MATCH", "a*", "COUNT", 1000) as [string, string[]];
    expect(keys.sort()).toEqual(["a1", "a3"]);
    expect(kv.run("SCAN", 0, "TYPE", "list", "COUNT", 1000)).toEqual(["0", ["a3"]]);
  });

  test("RANDOMKEY, KEYS, SWAPDB and FLUSHDB see the table's keys", () => {
    const kv = harness();
    expect(kv.run("RANDOMKEY")).toBeNull();
    for (const k of ["x", "y", "z"]) kv.run("SET", k, k);
    expect(["x", "y", "z"]).toContain(kv.run("RANDOMKEY") as string);
    expect((kv.run("KEYS", "*") as string[]).sort()).toEqual(["x", "y", "z"]);
    expect(kv.run("SWAPDB", 0, 1)).toBe("OK");
    expect(kv.run("DBSIZE")).toBe(0);
    kv.run("SELECT", 1);
    expect(kv.run("GET", "y")).toBe("y");
    expect(kv.run("FLUSHDB")).toBe("OK");
    expect(kv.run("DBSIZE")).toBe(0);
    expect(kv.run("GET", "y")).toBeNull();
  });

  test("a resize left under way by writes that stopped is finished by the active runs, a budget at a time", () => {
    const kv = harness(2);
    const table = kv.engine.dbs[1]!.table;
    kv.run("SELECT", 1);
    let n = 0;
    while (table.capacity < 1 << 17) kv.run("SET", `k${n++}`, "v"); // 65,537 keys: a growth from 65,536 slots starts
    expect(table.resizing).toBe(true);
    activeRehashRun(kv.engine, 0); // no time: one step of 1,024 old slots
    expect(table.resizing).toBe(true);
    activeRehashRun(kv.engine, 10_000);
    expect(table.resizing).toBe(false);
    expect(kv.run("DBSIZE")).toBe(n);
    expect(kv.run("GET", "k0")).toBe("v");
    expect(kv.run("GET", `k${n - 1}`)).toBe("v");
    expect(kv.run("EXISTS", ...Array.from({ length: n }, (_, i) => `k${i}`))).toBe(n);
  });
});

describe("the active expiry cycle's walk", () => {
  /** Runs of the cycle until `done` holds, at most `max`; returns how many it took. */
  const runsUntil = (kv: ReturnType<typeof harness>, cursors: ExpireCursors, done: () => boolean, max: number): number => {
    for (let runs = 1; runs <= max; runs++) {
      activeExpireRun(kv.engine, cursors, 1000);
      if (done()) return runs;
    }
    return Infinity;
  };

  test("deletes every key whose time has passed, counts them, and leaves the rest", () => {
    const kv = harness();
    const db = kv.engine.dbs[0]!;
    for (let i = 0; i < 1000; i++) kv.run("SET", `k${i}`, "v", ...(i % 2 === 0 ? ["PX", "10"] : i % 3 === 0 ? ["PX", "100000"] : []));
    kv.clock.advance(20);
    const cursors: ExpireCursors = new Map();
    expect(runsUntil(kv, cursors, () => db.size === 500, 3)).toBeLessThanOrEqual(3);
    expect(db.expiringCount).toBe(db.table.keys().filter((k) => db.table.expiresAt(db.table.find(k)) !== Infinity).length);
    expect(kv.run("EXISTS", "k1", "k3", "k0")).toBe(2);
    expect((kv.run("INFO", "stats") as string).match(/expired_keys:(\d+)/)![1]).toBe("500");
  });

  test("finds a few expired keys among many without a time, a bounded walk per run", () => {
    const kv = harness();
    const db = kv.engine.dbs[0]!;
    const many = 100_000;
    for (let i = 0; i < many; i += 1000) kv.run("MSET", ...Array.from({ length: 1000 }, (_, j) => [`p${i + j}`, "v"]).flat());
    for (const k of ["t1", "t2", "t3"]) kv.run("SET", k, "v", "PX", "10");
    kv.clock.advance(20);
    const cursors: ExpireCursors = new Map();
    // Each run walks at most 8,192 home slots of the table's 262,144: a whole walk in 32 runs.
    const runs = runsUntil(kv, cursors, () => db.expiringCount === 0, 60);
    expect(runs).toBeGreaterThan(1);
    expect(runs).toBeLessThanOrEqual(db.table.capacity / 8_192 + 1);
    expect(db.size).toBe(many);
  });

  test("keeps walking across a resize: keys added meanwhile grow the table, and every expired key still goes", () => {
    const kv = harness();
    const db = kv.engine.dbs[0]!;
    // Half expire: more than a quarter of each batch, so each run goes on while its budget lasts.
    for (let i = 0; i < 20_000; i++) kv.run("SET", `e${i}`, "v", "PX", i % 2 === 0 ? "10" : "100000");
    kv.clock.advance(20);
    const cursors: ExpireCursors = new Map();
    activeExpireRun(kv.engine, cursors, 0.01);
    for (let i = 0; i < 50_000; i += 1000) kv.run("MSET", ...Array.from({ length: 1000 }, (_, j) => [`g${i + j}`, "v"]).flat());
    // A run stops at a batch where a quarter or fewer had expired, which half expiring still gives
    // now and then (~2% of batches of 20): the walk resumes there in the next run.
    expect(runsUntil(kv, cursors, () => db.expiringCount === 10_000, 1000)).toBeLessThan(1000);
    expect(db.size).toBe(20_000 - 10_000 + 50_000);
    expect(kv.run("EXISTS", "e0", "e1", "e2", "e3")).toBe(2);
  });
});
