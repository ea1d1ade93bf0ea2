// INFO commandstats' time per command (src/kv/observe/command-timing.ts): commands bounded by their
// arguments share one clock reading per batch, everything else is timed alone, and the totals
// add up to the time that passed.
import { describe, expect, test } from "bun:test";
import { type Clock, ManualClock } from "../../../src/core/clock.ts";
import { CommandTiming, timedInBatch } from "../../../src/kv/observe/command-timing.ts";
import { createLogger } from "../../../src/core/log.ts";
import { lookupCommand } from "../../../src/kv/server/command-table.ts";
import { Engine } from "../../../src/kv/server/engine.ts";
import { Session } from "../../../src/kv/server/session.ts";
import { Collector } from "../harness.ts";

const stats = () => ({ calls: 0, usec: 0, rejectedCalls: 0, failedCalls: 0, latency: null });
const get = lookupCommand("get")!;

/** A manual clock, and the same clock counting its monotonic readings (`reads()`). */
function countingClock(): { clock: ManualClock; counting: Clock; reads: () => number } {
  const clock = new ManualClock();
  let reads = 0;
  const counting = { nowMs: () => clock.nowMs(), monotonicMs: () => (reads++, clock.monotonicMs()) };
  return { clock, counting, reads: () => reads };
}

describe("which commands are batched", () => {
  test("fast commands and argument-bound string writes are; data-dependent ones are timed alone", () => {
    for (const name of ["get", "incr", "lpush", "sadd", "hset", "zadd", "set", "mset", "setex", "append"]) {
      expect([name, timedInBatch(lookupCommand(name)!)]).toEqual([name, true]);
    }
    for (const name of ["keys", "lrange", "del", "smembers", "sunionstore", "exec", "flushall", "debug", "setrange"]) {
      expect([name, timedInBatch(lookupCommand(name)!)]).toEqual([name, false]);
    }
  });
});

describe("CommandTiming", () => {
  test("a batch's time is shared evenly; reading the clock once at its start and once at its end", () => {
    const { clock, counting, reads } = countingClock();
    const timing = new CommandTiming(counting);
    const a = stats();
    const b = stats();
    expect(timing.startBatched()).toBe(0);
    clock.advance(1);
    timing.finishBatched(a, get);
    expect(timing.startBatched()).toBe(0);
    clock.advance(2);
    timing.finishBatched(b, get);
    timing.finishBatched(a, get);
    timing.settle();
    expect(reads()).toBe(2);
    // 3 ms over three calls: 1000 µs each, a twice.
    expect(a.usec).toBe(2000);
    expect(b.usec).toBe(1000);
    // Nothing open: settling reads no clock and adds nothing.
    timing.settle();
    expect(reads()).toBe(2);
    expect(a.usec + b.usec).toBe(3000);
  });

  test("a command timed alone ends the open batch at its own start", () => {
    const clock = new ManualClock();
    const timing = new CommandTiming(clock);
    const fast = stats();
    timing.startBatched();
    clock.advance(1);
    timing.finishBatched(fast, get);
    const started = timing.endBatch();
    expect(fast.usec).toBe(1000);
    clock.advance(5);
    expect(timing.endBatch() - started).toBe(5);
    // The slow command's 5 ms did not reach the batch before it.
    expect(fast.usec).toBe(1000);
  });

  test("commands run back to back (beginRun … settle) start at the reading that ended the one before", () => {
    const { clock, counting, reads } = countingClock();
    const timing = new CommandTiming(counting);
    const fast = stats();
    timing.beginRun();
    // A command timed alone: one reading at its start, one at its end.
    const first = timing.startAlone();
    clock.advance(4);
    expect(timing.endBatch() - first).toBe(4);
    expect(reads()).toBe(2);
    // The next starts where the first ended: no reading of its own.
    clock.advance(1);
    const second = timing.startAlone();
    expect(reads()).toBe(2);
    expect(second).toBe(first + 4);
    clock.advance(2);
    expect(timing.endBatch() - second).toBe(3);
    // So does a batch that follows.
    expect(timing.startBatched()).toBe(first + 7);
    clock.advance(1);
    timing.finishBatched(fast, get);
    timing.settle();
    expect(fast.usec).toBe(1000);
    expect(reads()).toBe(4);
    // settle ends the chain: what starts after it reads the clock, so the time between two
    // reads of a connection (idle, the event loop) goes to no command.
    clock.advance(1000);
    const later = timing.startAlone();
    expect(reads()).toBe(5);
    expect(later).toBe(first + 1008);
  });

  test("without beginRun every command timed alone reads the clock at its start", () => {
    const { clock, counting, reads } = countingClock();
    const timing = new CommandTiming(counting);
    const first = timing.startAlone();
    clock.advance(2);
    timing.endBatch();
    clock.advance(50);
    expect(timing.startAlone() - first).toBe(52);
    expect(reads()).toBe(3);
  });
});

describe("through the engine", () => {
  test("a pipelined read's slow command keeps its own time; the fast ones around it share theirs", () => {
    // A real clock: DEBUG SLEEP sleeps for real, which is the work being timed.
    const engine = new Engine({ databases: 1, log: createLogger({ level: "silent" }), config: { "enable-debug-command": "yes" } });
    const collector = new Collector();
    const session = new Session(collector, null);
    engine.register(session);
    const read = [
      ["SET", "k", "v"],
      ["GET", "k"],
      ["DEBUG", "SLEEP", "0.2"],
      ["GET", "k"],
      ["GET", "k"],
    ];
    for (const argv of read) engine.execute(session, argv);
    engine.settleTiming();
    const usec = (name: string) => engine.stats.commands.get(name)!.usec;
    expect(engine.stats.commands.get("get")!.calls).toBe(3);
    expect(usec("debug")).toBeGreaterThanOrEqual(200_000);
    // The 200 ms went to DEBUG, not to the GETs on either side of it (a generous bound: the GETs
    // themselves take microseconds).
    expect(usec("get") + usec("set")).toBeLessThan(100_000);
    expect(usec("get")).toBeGreaterThan(0);
  });
});
