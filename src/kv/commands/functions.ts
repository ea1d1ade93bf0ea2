/**
 * FUNCTION and FCALL: Redis 7's functions (kv/scripting/function-libraries.ts), with Redis
 * 7.0's replies and errors. FUNCTION LOAD, DELETE, FLUSH and RESTORE change data: they are
 * counted as changes and recorded in the append-only file. DUMP's payload is Redis's
 * (kv/scripting/function-dump.ts).
 */
import type { Server } from "../kit/server.ts";
import { KvError, subcommandSyntaxError } from "../text/errors.ts";
import { globMatch } from "../text/glob.ts";
import { dumpLibraries, restoredLibraries } from "../scripting/function-dump.ts";
import { busyScriptError } from "../scripting/busy-script.ts";
import { runScript } from "../scripting/script-run.ts";
import { helpReply } from "../kit/help.ts";
import { declaredCommandFlags, finish, keyCountOf, killBusyScript } from "./scripting.ts";
import { type CommandFlag, type CommandSpec, countedKeys, type Exec, helpFlags, subcommandsOf } from "../kit/spec.ts";

const badKeyCount = () => new KvError("ERR Bad number of keys provided");

function fcall(x: Exec, argv: string[], readOnly: boolean): void {
  const target = x.engine.functions.get(argv[1]!);
  if (target === undefined) throw new KvError("ERR Function not found");
  const keyCount = keyCountOf(argv, badKeyCount);
  finish(x, runScript(x, target, argv, keyCount, readOnly));
}

function load(x: Exec, argv: string[]): void {
  let replace = false;
  for (const option of argv.slice(2, -1)) {
    if (option.toUpperCase() !== "REPLACE") throw new KvError(`ERR Unknown option given: ${option}`);
    replace = true;
  }
  const name = x.engine.functions.load(argv.at(-1)!, replace);
  x.engine.dirty++;
  x.reply.bulk(name);
}

function list(x: Exec, argv: string[]): void {
  let pattern: string | null = null;
  let withCode = false;
  for (let i = 2; i < argv.length; i++) {
    const option = argv[i]!.toUpperCase();
    if (option === "WITHCODE" && !withCode) withCode = true;
    else if (option === "LIBRARYNAME" && pattern === null) {
      if (i + 1 >= argv.length) throw new KvError("ERR library name argument was not given");
      pattern = argv[++i]!;
    } else throw new KvError(`ERR Unknown argument ${argv[i]}`);
  }
  const libraries = [...x.engine.functions.libraries.values()].filter((l) => pattern === null || globMatch(pattern, l.name));
  const r = x.reply;
  r.array(libraries.length);
  for (const library of libraries) {
    r.map(withCode ? 4 : 3);
    r.bulk("library_name");
    r.bulk(library.name);
    r.bulk("engine");
    r.bulk("LUA");
    r.bulk("functions");
    r.array(library.functions.length);
    for (const f of library.functions) {
      r.map(3);
      r.bulk("name");
      r.bulk(f.name);
      r.bulk("description");
      r.bulk(f.description);
      r.bulk("flags");
      r.set(f.flagNames.length);
      for (const flag of f.flagNames) r.simple(flag);
    }
    if (withCode) {
      r.bulk("library_code");
      r.bulk(library.code);
    }
  }
}

function restore(x: Exec, argv: string[]): void {
  if (argv.length > 4) throw subcommandSyntaxError("FUNCTION", argv[1]!);
  const policy = (argv[3] ?? "APPEND").toUpperCase();
  if (policy !== "FLUSH" && policy !== "APPEND" && policy !== "REPLACE") {
    throw new KvError("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
  }
  x.engine.functions.restore(restoredLibraries(Buffer.from(argv[2]!, "latin1")), policy);
  x.engine.dirty++;
  x.reply.simple("OK");
}

/** FUNCTION STATS: the busy function, if one is (refused while a script is busy), and the counts. */
function stats(x: Exec): void {
  const busy = x.engine.busyScript;
  if (busy?.kind === "eval") throw new KvError(busyScriptError.eval);
  const r = x.reply;
  r.map(2);
  r.bulk("running_script");
  if (busy === null) r.bulk(null);
  else {
    r.map(3);
    r.bulk("name");
    r.bulk(busy.name);
    r.bulk("command");
    r.array(busy.argv.length);
    for (const word of busy.argv) r.bulk(word);
    r.bulk("duration_ms");
    r.integer(Math.floor(x.engine.clock.monotonicMs() - busy.startedMs));
  }
  r.bulk("engines");
  r.map(1);
  r.bulk("LUA");
  r.map(2);
  r.bulk("libraries_count");
  r.integer(x.engine.functions.libraries.size);
  r.bulk("functions_count");
  r.integer(x.engine.functions.functionCount);
}

const sub = subcommandsOf("function", "scripting");

const fcallFlags: readonly CommandFlag[] = ["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"];

/** FCALL's flags: its function's, as declared (Redis's fcallGetCommandFlags). */
function fcallFlagsFor(this: CommandSpec, engine: Server, argv: readonly string[]): readonly CommandFlag[] {
  return declaredCommandFlags(this, engine.functions.get(argv[1] ?? "")?.flags);
}

export const functionCommands: readonly CommandSpec[] = [
  {
    name: "fcall",
    arity: -3,
    flags: fcallFlags,
    group: "scripting",
    summary: "Runs a function.",
    movableKeys: countedKeys(2),
    flagsFor: fcallFlagsFor,
    run: (x, argv) => fcall(x, argv, false),
  },
  {
    name: "fcall_ro",
    arity: -3,
    flags: ["readonly", ...fcallFlags],
    group: "scripting",
    summary: "Runs a function that declared no-writes.",
    movableKeys: countedKeys(2),
    flagsFor: fcallFlagsFor,
    run: (x, argv) => fcall(x, argv, true),
  },
  {
    name: "function",
    arity: -2,
    flags: [],
    group: "scripting",
    summary: "Function libraries.",
    subcommands: [
      sub("load", -3, "Loads a library of functions.", load, ["write", "denyoom", "noscript"]),
      sub(
        "delete",
        3,
        "Deletes a library and its functions.",
        (x, argv) => {
          x.engine.functions.delete(argv[2]!);
          x.engine.dirty++;
          x.reply.simple("OK");
        },
        ["write", "noscript"],
      ),
      sub(
        "flush",
        -2,
        "Deletes every library.",
        (x, argv) => {
          // More than one mode is refused as a subcommand syntax error, as functionFlushCommand does.
          if (argv.length > 3) throw subcommandSyntaxError("FUNCTION", argv[1]!);
          if (argv.length === 3 && !["ASYNC", "SYNC"].includes(argv[2]!.toUpperCase())) {
            throw new KvError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
          }
          x.engine.functions.flush();
          x.engine.dirty++;
          x.reply.simple("OK");
        },
        ["write", "noscript"],
      ),
      sub("list", -2, "Lists the libraries and their functions.", list, ["noscript"]),
      sub(
        "dump",
        2,
        "Serializes every library (as Redis's FUNCTION DUMP).",
        (x) => {
          const payload = dumpLibraries([...x.engine.functions.libraries.values()].map((library) => library.code));
          x.reply.bulkBytes(payload, 0, payload.length);
        },
        ["noscript"],
      ),
      sub("restore", -3, "Loads the libraries of a FUNCTION DUMP payload.", restore, ["write", "denyoom", "noscript"]),
      sub("stats", 2, "Shows the busy function, if any, and the counts.", stats, ["noscript", "allow_busy"]),
      sub("kill", 2, "Ends the busy function, unless it has written.", (x) => killBusyScript(x, "function"), ["noscript", "allow_busy"]),
      sub(
        "help",
        2,
        "Shows FUNCTION's subcommands.",
        (x) =>
          helpReply(x, "FUNCTION", [
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries.",
            "STATS",
            "    Return information about the current function running and the available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries (svc at once, whichever mode is given).",
            "DUMP",
            "    Return a serialized payload representing the current libraries.",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries of a payload (default APPEND).",
          ]),
        helpFlags,
      ),
    ],
  },
];
