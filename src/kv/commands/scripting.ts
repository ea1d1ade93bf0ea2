/**
 * EVAL, EVALSHA, their read-only forms, and SCRIPT: Lua scripts as Redis 7.0 runs them
 * (kv/scripting/: the cache, one run; native/script: the Lua side). `EVAL script numkeys key…
 * arg…` compiles the script (kept by its SHA-1, so EVALSHA can run it again) and runs it with
 * KEYS and ARGV set.
 */
import { parseInt64, parseSmallInteger } from "../text/args.ts";
import { KvError, notAnInteger } from "../text/errors.ts";
import { replayResp } from "../scripting/resp-replay.ts";
import { RespWriter } from "../resp/writer.ts";
import { busyScriptError, type ScriptKind } from "../scripting/busy-script.ts";
import type { ScriptReply } from "../scripting/lua-state.ts";
import type { ScriptFlags } from "../scripting/shebang.ts";
import type { Server } from "../kit/server.ts";
import { runScript } from "../scripting/script-run.ts";
import { helpReply } from "../kit/help.ts";
import { type CommandFlag, type CommandSpec, countedKeys, type Exec, helpFlags, subcommandsOf } from "../kit/spec.ts";

/** Hex digits of a script's SHA-1, the only length EVALSHA looks up. */
const shaHexDigits = 40;

/** RESP's type bytes: error, integer, status, bulk string; and the minus of a null bulk. */
const errorType = 0x2d;
const integerType = 0x3a;
const statusType = 0x2b;
const bulkType = 0x24;
const minus = 0x2d;

/**
 * SCRIPT KILL (`kind` eval) and FUNCTION KILL (function): ends the busy script at its next
 * instruction, with Redis's error to its client, unless it has written (then only SHUTDOWN
 * NOSAVE stops it) or is of the other kind. Redis 7.0's replies.
 */
export function killBusyScript(x: Exec, kind: ScriptKind): void {
  const busy = x.engine.busyScript;
  if (busy === null) throw new KvError("NOTBUSY No scripts in execution right now.");
  if (busy.wrote) {
    throw new KvError(
      "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the " +
        "script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
    );
  }
  if (busy.kind !== kind) throw new KvError(busyScriptError[busy.kind]);
  busy.kill();
  x.reply.simple("OK");
}

const noScript = () => new KvError("NOSCRIPT No matching script. Please use EVAL.");

/**
 * How many of EVAL's (or FCALL's) words after numkeys are keys; the keys and arguments are
 * `argv[3…]`, taken in place. `notANumber`: the error for a numkeys that is not an integer, which
 * FCALL words its own way.
 */
export function keyCountOf(argv: readonly string[], notANumber = notAnInteger): number {
  // A count too long for a small integer is read as Redis reads it, only to refuse it alike.
  const count = parseSmallInteger(argv[2]!) ?? parseInt64(argv[2]!);
  if (count === null) throw notANumber();
  if (count > argv.length - 3) throw new KvError("ERR Number of keys can't be greater than number of args");
  if (count < 0) throw new KvError("ERR Number of keys can't be negative");
  return Number(count);
}

function evalScript(x: Exec, argv: string[], readOnly: boolean): void {
  const keyCount = keyCountOf(argv);
  const target = x.engine.scripts.get(x.engine.scripts.load(argv[1]!))!;
  finish(x, runScript(x, target, argv, keyCount, readOnly));
}

function evalSha(x: Exec, argv: string[], readOnly: boolean): void {
  // A digest of the wrong length is NOSCRIPT before numkeys is read; one of the right length is
  // looked up after it, as Redis 7.0's evalShaCommand orders its checks.
  const sha = argv[1]!;
  if (sha.length !== shaHexDigits) throw noScript();
  const keyCount = keyCountOf(argv);
  // Looked up as sent first: the parser hands a repeated SHA-1 over as the same string, whose
  // hash is kept, and lower case is what clients send.
  const target = x.engine.scripts.get(sha) ?? x.engine.scripts.get(sha.toLowerCase());
  if (target === undefined) throw noScript();
  finish(x, runScript(x, target, argv, keyCount, readOnly));
}

/** Writes a script's reply now, or once it ends if it went busy (null). */
export function finish(x: Exec, result: ScriptReply | null): void {
  if (result !== null) answer(x, result);
  else answerWhenDone(x);
}

/** A busy script's reply, written once it ends; its closure made here, not on finish's every call. */
function answerWhenDone(x: Exec): void {
  x.engine.busyScript!.whenDone((reply) => answer(x, reply));
}

/** Writes a script's reply. An error makes EVAL a failed call, as Redis counts it. */
function answer(x: Exec, result: ScriptReply): void {
  const { bytes, end } = result;
  const type = bytes[0];
  if (type === errorType) x.failed = true;
  // A plain RESP2 reply (the native side's flag: integers, statuses, strings and arrays of them)
  // is what a RESP2 client gets, and an integer, a status or a string (not the null one) reads the
  // same in RESP3: a connection takes the bytes the native side wrote as they are, unread
  // (replaying a BullMQ job's 24 fields was ~1% of the server's time).
  else if (
    x.reply instanceof RespWriter &&
    result.plain &&
    (x.reply.protocol === 2 || type === integerType || type === statusType || (type === bulkType && bytes[1] !== minus))
  )
    return x.reply.encoded(bytes, 0, end);
  replayResp(bytes, x.reply, result.counted, end);
}

const evalFlags: readonly CommandFlag[] = ["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"];

/**
 * The flags a script command runs with when its script declared its own, as Redis 7.0's
 * scriptFlagsToCmdFlags makes them: a write unless no-writes, and one that may grow the data
 * (refused past maxmemory before it runs) unless no-writes or allow-oom. `flags` null or
 * undeclared: the command's own.
 */
export function declaredCommandFlags(spec: CommandSpec, flags: ScriptFlags | null | undefined): readonly CommandFlag[] {
  if (flags === null || flags === undefined || !flags.declared) return spec.flags;
  const out: CommandFlag[] = spec.flags.filter((flag) => flag !== "write" && flag !== "denyoom");
  if (!flags.noWrites && !flags.allowOom) out.push("denyoom");
  if (!flags.noWrites) out.push("write");
  return out;
}

/** EVAL's flags: its script's, found by its body (kept or not). */
function evalFlagsFor(this: CommandSpec, engine: Server, argv: readonly string[]): readonly CommandFlag[] {
  return declaredCommandFlags(this, engine.scripts.flagsOfBody(argv[1] ?? ""));
}

/** EVALSHA's flags: its script's, if one is kept under that SHA-1. */
function evalShaFlagsFor(this: CommandSpec, engine: Server, argv: readonly string[]): readonly CommandFlag[] {
  const sha = argv[1] ?? "";
  if (sha.length !== shaHexDigits) return this.flags;
  return declaredCommandFlags(this, engine.scripts.get(sha.toLowerCase())?.flags);
}
const evalKeys = countedKeys(2);

/** A subcommand of `container` (SCRIPT, FUNCTION). */
const sub = subcommandsOf("script", "scripting");

export const scriptingCommands: readonly CommandSpec[] = [
  {
    name: "eval",
    arity: -3,
    flags: evalFlags,
    group: "scripting",
    summary: "Runs a Lua script.",
    movableKeys: evalKeys,
    flagsFor: evalFlagsFor,
    run: (x, argv) => evalScript(x, argv, false),
  },
  {
    name: "evalsha",
    arity: -3,
    flags: evalFlags,
    group: "scripting",
    summary: "Runs a cached Lua script by its SHA-1.",
    movableKeys: evalKeys,
    flagsFor: evalShaFlagsFor,
    run: (x, argv) => evalSha(x, argv, false),
  },
  {
    name: "eval_ro",
    arity: -3,
    flags: ["readonly", ...evalFlags],
    group: "scripting",
    summary: "Runs a read-only Lua script.",
    movableKeys: evalKeys,
    flagsFor: evalFlagsFor,
    run: (x, argv) => evalScript(x, argv, true),
  },
  {
    name: "evalsha_ro",
    arity: -3,
    flags: ["readonly", ...evalFlags],
    group: "scripting",
    summary: "Runs a cached read-only Lua script by its SHA-1.",
    movableKeys: evalKeys,
    flagsFor: evalShaFlagsFor,
    run: (x, argv) => evalSha(x, argv, true),
  },
  {
    name: "script",
    arity: -2,
    flags: [],
    group: "scripting",
    summary: "The script cache.",
    subcommands: [
      sub("load", 3, "Compiles a script and keeps it; answers its SHA-1.", (x, argv) => x.reply.bulk(x.engine.scripts.load(argv[2]!)), ["noscript", "stale"]),
      sub(
        "exists",
        -3,
        "Whether each SHA-1 names a cached script.",
        (x, argv) => {
          x.reply.array(argv.length - 2);
          for (let i = 2; i < argv.length; i++) x.reply.integer(x.engine.scripts.get(argv[i]!.toLowerCase()) !== undefined ? 1 : 0);
        },
        ["noscript"],
      ),
      sub(
        "flush",
        -2,
        "Forgets every cached script.",
        (x, argv) => {
          if (argv.length > 3 || (argv.length === 3 && !["ASYNC", "SYNC"].includes(argv[2]!.toUpperCase()))) {
            throw new KvError("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
          }
          x.engine.scripts.flush();
          x.reply.simple("OK");
        },
        ["noscript"],
      ),
      sub("kill", 2, "Ends the busy script, unless it has written.", (x) => killBusyScript(x, "eval"), ["noscript", "allow_busy"]),
      sub(
        "debug",
        3,
        "NO: scripts run as they do; YES and SYNC (Redis's Lua debugger) are refused.",
        (x, argv) => {
          // Redis's debugger takes over the connection, so replies still waiting to go out refuse it.
          if ((x.session.transport?.memory?.().outputBytes ?? 0) > 0) throw new KvError("ERR SCRIPT DEBUG must be called outside a pipeline");
          const mode = argv[2]!.toUpperCase();
          if (mode === "NO") return x.reply.simple("OK");
          if (mode === "YES" || mode === "SYNC") throw new KvError("ERR svc has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported");
          throw new KvError("ERR Use SCRIPT DEBUG YES/SYNC/NO");
        },
        ["noscript"],
      ),
      sub(
        "help",
        2,
        "Shows SCRIPT's subcommands.",
        (x) =>
          helpReply(x, "SCRIPT", [
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "    svc has no Lua debugger: only NO is taken.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache.",
            "    svc flushes it at once whichever mode is given.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
          ]),
        helpFlags,
      ),
    ],
  },
];
