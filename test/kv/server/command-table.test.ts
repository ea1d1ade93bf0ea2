/**
 * The dispatch table's numbering: each command and subcommand has a number of its own, by which
 * an engine keeps its statistics (two sharing one would add their calls together in INFO
 * commandstats), and traits that say what its flags say (server/command-traits.ts), which the
 * path every command takes reads instead of the flags.
 */
import { describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log.ts";
import { RespWriter } from "../../../src/kv/resp/writer.ts";
import { commandTable } from "../../../src/kv/server/command-table.ts";
import { traitDenyoom, traitNoscript, traitsOf, traitTimedInBatch, traitWrite } from "../../../src/kv/server/command-traits.ts";
import { Engine } from "../../../src/kv/server/engine.ts";
import { Session } from "../../../src/kv/server/session.ts";
import { timedInBatch } from "../../../src/kv/observe/command-timing.ts";

const everySpec = [...commandTable.values()].flatMap((spec) => [spec, ...(spec.subcommands ?? [])]);

describe("the dispatch table", () => {
  test("numbers every command and subcommand once", () => {
    const numbers = everySpec.map((spec) => spec.statsIndex);
    expect(numbers.every((n) => typeof n === "number")).toBe(true);
    expect(new Set(numbers).size).toBe(everySpec.length);
  });

  test("gives each the traits its flags say", () => {
    for (const spec of everySpec) {
      const traits = traitsOf(spec);
      const has = (bit: number) => (traits & bit) !== 0;
      expect([spec.name, has(traitNoscript), has(traitWrite), has(traitDenyoom), has(traitTimedInBatch)]).toEqual([
        spec.name,
        spec.flags.includes("noscript"),
        spec.flags.includes("write"),
        spec.flags.includes("denyoom"),
        timedInBatch(spec),
      ]);
    }
  });

  test("keeps each command's statistics apart, by number, and CONFIG RESETSTAT clears them all", () => {
    const engine = new Engine({ databases: 1, log: createLogger({ level: "silent" }) });
    const out = new RespWriter();
    const session = new Session(out, null);
    engine.register(session);
    const run = (...argv: string[]) => {
      out.start = out.length = 0;
      engine.execute(session, argv);
      engine.settleTiming();
      return out.buffer.latin1Slice(0, out.length);
    };
    const calls = () =>
      Object.fromEntries((run("INFO", "commandstats").match(/cmdstat_[a-z|]+:calls=\d+/g) ?? []).map((line) => line.slice("cmdstat_".length).split(":calls=")));
    run("SET", "k", "1");
    run("INCR", "k");
    run("INCR", "k");
    run("CONFIG", "GET", "maxmemory");
    expect(calls()).toMatchObject({ set: "1", incr: "2", "config|get": "1" });
    run("CONFIG", "RESETSTAT");
    run("INCR", "k");
    // The INFO that read the first counts is counted too; after the reset only INCR and the reset's own.
    expect(calls()).toEqual({ incr: "1", "config|resetstat": "1" });
  });
});
