/**
 * The stream commands' declarations: names, arities, flags and key positions as Redis 7.0's
 * COMMAND INFO gives them (compared in test/kv/commands/command-docs.test.ts).
 */
import { isKeyword } from "../../text/args.ts";
import { helpFlags, type CommandFlag, type CommandSpec, type Exec } from "../../kit/spec.ts";
import { entryCommandRunners as e } from "./entries.ts";
import { groupCommandRunners as g } from "./groups.ts";
import { infoCommandRunners as i } from "./xinfo.ts";
import { readCommandRunners as r } from "./read.ts";

const one: readonly [number, number, number] = [1, 1, 1];
const second: readonly [number, number, number] = [2, 2, 1];

/** XREAD's and XREADGROUP's keys: the first half of what follows STREAMS (a group's names are skipped). */
function streamsKeys(argv: readonly string[]): string[] | null {
  for (let at = 1; at < argv.length; at++) {
    const word = argv[at]!;
    if (isKeyword(word, "GROUP")) at += 2;
    else if (isKeyword(word, "BLOCK") || isKeyword(word, "COUNT")) at++;
    else if (isKeyword(word, "STREAMS")) {
      const rest = argv.length - at - 1;
      if (rest === 0 || rest % 2 !== 0) return null;
      return argv.slice(at + 1, at + 1 + rest / 2);
    }
  }
  return null;
}

type Run = (x: Exec, argv: string[]) => void;
const sub = (
  container: string,
  name: string,
  arity: number,
  flags: readonly CommandFlag[],
  summary: string,
  run: Run,
  keys?: readonly [number, number, number],
): CommandSpec => ({
  name: `${container}|${name}`,
  arity,
  flags,
  group: "stream",
  summary,
  run,
  ...(keys === undefined ? {} : { keys }),
});

export const streamCommands: readonly CommandSpec[] = [
  { name: "xadd", arity: -5, flags: ["write", "denyoom", "fast"], group: "stream", summary: "Appends an entry to a stream.", keys: one, run: e.xadd },
  { name: "xlen", arity: 2, flags: ["readonly", "fast"], group: "stream", summary: "Returns the number of entries in a stream.", keys: one, run: e.xlen },
  { name: "xrange", arity: -4, flags: ["readonly"], group: "stream", summary: "Returns the entries in a range of IDs.", keys: one, run: e.xrange },
  {
    name: "xrevrange",
    arity: -4,
    flags: ["readonly"],
    group: "stream",
    summary: "Returns the entries in a range of IDs, last first.",
    keys: one,
    run: e.xrevrange,
  },
  { name: "xdel", arity: -3, flags: ["write", "fast"], group: "stream", summary: "Deletes entries by ID.", keys: one, run: e.xdel },
  { name: "xtrim", arity: -4, flags: ["write"], group: "stream", summary: "Deletes the oldest entries past a length or below an ID.", keys: one, run: e.xtrim },
  {
    name: "xsetid",
    arity: -3,
    flags: ["write", "denyoom", "fast"],
    group: "stream",
    summary: "Sets a stream's last ID and counters.",
    keys: one,
    run: e.xsetid,
  },
  {
    name: "xread",
    arity: -4,
    flags: ["readonly", "blocking", "movablekeys"],
    group: "stream",
    summary: "Returns entries after IDs, blocking until there are some if asked.",
    keys: [0, 0, 0],
    movableKeys: streamsKeys,
    run: r.xread,
  },
  {
    name: "xreadgroup",
    arity: -7,
    flags: ["write", "blocking", "movablekeys"],
    group: "stream",
    summary: "Delivers entries to a consumer of a group, blocking until there are some if asked.",
    keys: [0, 0, 0],
    movableKeys: streamsKeys,
    run: r.xreadgroup,
  },
  { name: "xack", arity: -4, flags: ["write", "fast"], group: "stream", summary: "Acknowledges pending entries of a group.", keys: one, run: g.xack },
  { name: "xpending", arity: -3, flags: ["readonly"], group: "stream", summary: "Returns a group's pending entries.", keys: one, run: g.xpending },
  { name: "xclaim", arity: -6, flags: ["write", "fast"], group: "stream", summary: "Gives pending entries to another consumer.", keys: one, run: g.xclaim },
  {
    name: "xautoclaim",
    arity: -6,
    flags: ["write", "fast"],
    group: "stream",
    summary: "Gives idle pending entries to another consumer, from a cursor.",
    keys: one,
    run: g.xautoclaim,
  },
  {
    name: "xgroup",
    arity: -2,
    flags: [],
    group: "stream",
    summary: "Consumer groups.",
    subcommands: [
      sub("xgroup", "create", -5, ["write", "denyoom"], "Creates a consumer group.", g.xgroupCreate, second),
      sub("xgroup", "setid", -5, ["write"], "Sets a group's last delivered ID.", g.xgroupSetId, second),
      sub("xgroup", "destroy", 4, ["write"], "Deletes a consumer group.", g.xgroupDestroy, second),
      sub("xgroup", "createconsumer", 5, ["write", "denyoom"], "Creates a consumer in a group.", g.xgroupCreateConsumer, second),
      sub("xgroup", "delconsumer", 5, ["write"], "Deletes a consumer from a group.", g.xgroupDelConsumer, second),
      sub("xgroup", "help", 2, helpFlags, "Shows XGROUP's subcommands.", g.xgroupHelp),
    ],
  },
  {
    name: "xinfo",
    arity: -2,
    flags: [],
    group: "stream",
    summary: "Stream, group and consumer information.",
    subcommands: [
      sub("xinfo", "stream", -3, ["readonly"], "Shows a stream's state.", i.xinfoStream, second),
      sub("xinfo", "groups", 3, ["readonly"], "Lists a stream's consumer groups.", i.xinfoGroups, second),
      sub("xinfo", "consumers", 4, ["readonly"], "Lists a group's consumers.", i.xinfoConsumers, second),
      sub("xinfo", "help", 2, helpFlags, "Shows XINFO's subcommands.", i.xinfoHelp),
    ],
  },
];
