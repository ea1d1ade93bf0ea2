/**
 * One run of a script: its redis.call and redis.pcall, each a command run for the script's client
 * as that client would run it, with what Redis refuses a script on top (scriptCall below).
 *
 * A script is atomic, as in Redis: nothing else runs until it ends — one past busy-reply-threshold
 * lets the server answer others, but only BUSY (busy-script.ts) — and the append-only file gets
 * its writes between MULTI and EXEC, so a replay applies all of them or none. A SELECT inside it
 * holds for the rest of the script only.
 */
import { luaAnswerAllowed, luaAnswerDenied, luaAnswerUnknownCommand, luaAskElapsed, luaAskSetProtocol } from "../../native/addon.ts";
import { scriptNoPermission } from "../acl/acl-users.ts";
import type { Server } from "../kit/server.ts";
import { cannotPersist, KvError, noReplicas, overMaxmemory } from "../text/errors.ts";
import { RespWriter } from "../resp/writer.ts";
import type { Session } from "../server/session.ts";
import { traitDenyoom, traitMayReplicate, traitNoscript, traitsOf, traitWrite } from "../server/command-traits.ts";
import type { Exec } from "../kit/spec.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import { BusyScript, type BusyRun } from "./busy-script.ts";
import type { ScriptHost, ScriptReply } from "./lua-state.ts";
import { unpackWords } from "./words.ts";
import { compilesScripts } from "./script-cache.ts";
import type { RunTarget } from "./run-target.ts";
import { CallRecord } from "./compiled/call-record.ts";
import { type RedisHost, redisHost } from "./compiled/lua-library.ts";
import type { LuaValue } from "./compiled/lua-value.ts";
import { compiledStats, compileScript, noteBail, replyValue, runCompiled, writeScriptReply } from "./compiled/compiled-script.ts";

/** The most µs luaAskElapsed answers (a u32 on the native side: 71 minutes). */
const elapsedMicrosMax = 0xffffffff;

/** What each command a script runs writes its reply with, into the mailbox unless it outgrows it. */
const scratch = new RespWriter();
/** What each command a compiled script runs writes its reply with. */
const compiledOut = new RespWriter();

/**
 * How long a compiled run may take before it bails and Lua runs the script (ms): Lua's run then
 * goes busy past busy-reply-threshold, as Redis's does. Short, since Lua's run starts over.
 */
const compiledRunMsMax = 50;
/** Bails in a row after which a script is run on Lua only (one that errors on every run, say). */
const compiledBailsInARowMax = 4;

/**
 * One script's run as the server sees it: its client, and whether it has written yet. One is
 * kept between runs and begun anew (a run that went busy keeps its own): scripts run one at a
 * time, and making one per run was garbage on every EVALSHA.
 */
class ScriptRun implements ScriptHost, BusyRun, RedisHost {
  wrote = false;
  /** A compiled run's commands, answered again if Lua runs the script after it (call-record.ts). */
  readonly record = new CallRecord();
  /** The protocol the script's commands reply in: RESP2 until it calls redis.setresp(3). */
  private protocol: 2 | 3 = 2;
  private engine!: Server;
  private session!: Session;
  private readOnly = false;
  private allowOom = false;
  /** The command that runs the script: its words from wordsFrom on are the script's keys and arguments, which its commands refer to. */
  private scriptArgv: readonly string[] = [];
  /** When that command started (monotonic ms): the script's time is counted from it. */
  startedMs = 0;
  /** Errors of the commands the script runs count in INFO errorstats, as a client's do. */
  private readonly countError = (message: string) => this.engine.stats.errorReplied(message);

  /** Starts a run for `session`'s command `scriptArgv`, which started at `startedMs` (monotonic). */
  begin(engine: Server, session: Session, readOnly: boolean, allowOom: boolean, scriptArgv: readonly string[], startedMs: number): this {
    this.engine = engine;
    this.session = session;
    this.startedMs = startedMs;
    this.readOnly = readOnly;
    this.allowOom = allowOom;
    this.scriptArgv = scriptArgv;
    this.wrote = false;
    this.protocol = 2;
    return this;
  }

  /** The run has ended: it holds no client's words until it begins again. */
  end(): void {
    this.scriptArgv = [];
  }

  call(words: Buffer, inMailbox: boolean, mailbox: Latin1Buffer): number | Uint8Array {
    // Read before the reply is written over them.
    const argv = unpackWords(words, !inMailbox, this.scriptArgv, wordsFrom);
    if (this.record.replaying) {
      const recorded = this.record.answer(argv);
      if (recorded !== null) return answerFromRecord(recorded.bytes, recorded.from, recorded.to, mailbox);
      this.engine.log.error({ script: true, command: argv[0] }, "a compiled script's command differs from Lua's: the rest of the run is live");
    }
    const out = scratch;
    out.buffer = mailbox;
    this.runCommand(argv, out);
    return out.buffer === mailbox ? out.length : out.buffer.subarray(0, out.length);
  }

  /** redis.call from a compiled run (lua-library.ts); an error reply bails. */
  command(argv: string[]): LuaValue {
    const out = compiledOut;
    this.runCommand(argv, out);
    this.record.add(argv, out.buffer, out.length);
    return replyValue(out.buffer, out.length);
  }

  /** One of the script's commands, its reply written from the start of `out`'s buffer. */
  private runCommand(argv: string[], out: RespWriter): void {
    out.start = 0;
    out.length = 0;
    out.onError = this.countError;
    out.protocol = this.protocol;
    const dirtyBefore = this.engine.dirty;
    scriptCall(this.engine, this.session, argv, out, this.readOnly, this.allowOom || this.wrote);
    this.wrote ||= this.engine.dirty !== dirtyBefore;
  }

  log(line: Buffer): void {
    // A line the compiled run logged before it bailed is not logged again by Lua's run.
    if (this.record.skipsLog()) return;
    logLine(this.engine, line);
  }

  /** redis.log from a compiled run (lua-library.ts). */
  logLine(level: number, text: string): void {
    this.record.logged();
    logAt(this.engine, level, text);
  }

  ask(question: number, argument: number | Buffer): number {
    if (question === luaAskSetProtocol) {
      this.protocol = argument === 3 ? 3 : 2;
      return 0;
    }
    if (question === luaAskElapsed) return Math.min(elapsedMicrosMax, Math.max(0, Math.round((this.engine.clock.monotonicMs() - this.startedMs) * 1000)));
    const allowed = mayRun(this.engine, this.session, unpackWords(argument as Buffer));
    return allowed === null ? luaAnswerUnknownCommand : allowed ? luaAnswerAllowed : luaAnswerDenied;
  }
}

/**
 * redis.acl_check_cmd: whether the session's user may run `argv` as a command, keys and channels
 * included, as ACL DRYRUN would answer (refusals are not logged); null for a command, or a
 * container's subcommand, that does not exist. Its arguments are not counted: Redis looks the
 * command up by name only.
 */
function mayRun(engine: Server, session: Session, argv: string[]): boolean | null {
  const spec = engine.commandNamed(argv[0]!);
  if (spec === undefined) return null;
  let target = spec;
  if (spec.subcommands !== undefined && argv.length > 1) {
    const sub = spec.subcommands.find((s) => s.name === `${spec.name}|${argv[1]!.toLowerCase()}`);
    if (sub === undefined) return null;
    target = sub;
  }
  const user = session.user;
  return user === null || user.unrestricted || engine.acl.refusal(user, target, argv) === null;
}

/**
 * Runs a script or function for the client of `x` (`readOnly`: EVAL_RO, FCALL_RO) with the words
 * of its command `argv` after numkeys, the first `keyCount` of them keys. Returns its reply (to be
 * used before the next run), or null when it ran past busy-reply-threshold: it is the engine's
 * busy script then (engine.busyScript), which ends it later and takes the steps its caller gives
 * it (BusyScript.whenDone). One that declared its flags is held to them first, as Redis 7.0 holds
 * it: a read-only command runs only one that declared no-writes, and past maxmemory one runs
 * only if it declared allow-oom or no-writes.
 */
export function runScript(x: Exec, target: RunTarget, argv: readonly string[], keyCount: number, readOnly: boolean): ScriptReply | null {
  const { engine, session } = x;
  const flags = target.flags;
  if (flags.declared && readOnly && !flags.noWrites) throw new KvError("ERR Can not execute a script with write flag using *_ro command.");
  if (flags.declared && !flags.noWrites && !flags.allowOom && engine.overMaxmemory) throw overMaxmemory();
  const run = (spareRun ?? new ScriptRun()).begin(engine, session, readOnly || flags.noWrites, flags.allowOom, argv, x.timeMs);
  spareRun = null;
  const dbIndex = session.dbIndex;
  // Inside EXEC the transaction's own MULTI/EXEC already wraps the script's writes.
  const wraps = !session.inExec;
  if (wraps) engine.aof?.beginTransaction();
  engine.startScriptClock();
  session.inScript = true;
  let reply: ScriptReply | null;
  try {
    if (target.toCompile !== null) compileWhenDue(target);
    const compiled = target.compiled !== null;
    reply = compiled ? runCompiledFirst(engine, target, run, argv, keyCount) : null;
    if (reply === null) {
      const busyAfter = compiled ? busyAfterBail(engine, run) : engine.busyReplyThresholdMs;
      reply = target.state.run(target.id, argv, wordsFrom, keyCount, busyAfter, run);
    }
  } catch (error) {
    endRun(engine, session, wraps, dbIndex);
    keepForNext(run);
    throw error;
  } finally {
    session.inScript = false;
  }
  if (reply !== null) {
    endRun(engine, session, wraps, dbIndex);
    keepForNext(run);
    return reply;
  }
  const busy = new BusyScript(target.state, run, session, target.kind, target.name, argv, x.timeMs);
  endRunWhenDone(busy, engine, session, wraps, dbIndex);
  engine.scriptBusy(busy);
  return null;
}

/** The reply of a compiled run (compiled-script.ts), built in a buffer the next run reuses. */
const compiledReply: ScriptReply = { bytes: Buffer.alloc(0), end: 0, counted: false, plain: true };

/**
 * Runs `target`'s compiled form; null when it bailed, and Lua is to run the script from its
 * start, its commands so far answered from the record. A script that bails on every run goes
 * back to Lua for good.
 */
function runCompiledFirst(engine: Server, target: RunTarget, run: ScriptRun, argv: readonly string[], keyCount: number): ScriptReply | null {
  const outer = redisHost.current;
  redisHost.current = run;
  run.record.clear();
  try {
    const value = runCompiled(target.compiled!, argv, wordsFrom, keyCount, engine.clock, run.startedMs + compiledRunMsMax);
    writeScriptReply(value, compiledReply);
    target.compiledBailsInARow = 0;
    compiledStats.completed++;
    return compiledReply;
  } catch (error) {
    if (++target.compiledBailsInARow >= compiledBailsInARowMax) target.compiled = null;
    noteBail(engine, error);
    run.record.startReplay();
    return null;
  } finally {
    redisHost.current = outer;
  }
}

/**
 * Compiles a script (compiled/) at its run compilesScripts.fromRun, its second by default: one
 * run once costs no compile.
 */
function compileWhenDue(target: RunTarget): void {
  if (++target.timesRun < compilesScripts.fromRun) return;
  target.compiled = compileScript(target.toCompile!);
  target.toCompile = null;
}

/**
 * When Lua's run, after a compiled run bailed, goes busy: busy-reply-threshold after the script
 * started, the compiled run's time counted (Lua counts from its own start).
 */
function busyAfterBail(engine: Server, run: ScriptRun): number {
  return Math.max(0, engine.busyReplyThresholdMs - (engine.clock.monotonicMs() - run.startedMs));
}

/** A recorded reply answered to Lua's run: in the mailbox if it fits, as the native side takes replies. */
function answerFromRecord(bytes: Latin1Buffer, from: number, to: number, mailbox: Latin1Buffer): number | Uint8Array {
  if (to - from > mailbox.length) return bytes.subarray(from, to);
  bytes.copy(mailbox, 0, from, to);
  return to - from;
}

/**
 * A busy run ends (endRun) once its script does. Its closure is made here rather than in
 * runScript, which would otherwise make a scope object for its variables on every run.
 */
function endRunWhenDone(busy: BusyScript, engine: Server, session: Session, wraps: boolean, dbIndex: number): void {
  busy.whenDone(() => endRun(engine, session, wraps, dbIndex));
}

/** The run kept for the next script (ScriptRun); null while it runs. */
let spareRun: ScriptRun | null = null;

/** A run that ended without going busy is kept for the next script. */
function keepForNext(run: ScriptRun): void {
  run.end();
  spareRun = run;
}

/** Where EVAL's and FCALL's keys and arguments start: after the script (or function) and numkeys. */
const wordsFrom = 3;

/**
 * A run has ended: its writes' transaction closes, a SELECT inside it is undone, and keys' times
 * are judged against the clock again.
 */
function endRun(engine: Server, session: Session, wraps: boolean, dbIndex: number): void {
  engine.stopScriptClock();
  if (wraps) engine.aof?.endTransaction();
  session.dbIndex = dbIndex;
}

/** A script's command refused: a rejected call of the command, as Redis's scriptCall counts it. */
function refuseCall(engine: Server, argv: string[], out: RespWriter, message: string): void {
  engine.countRejectedCall(argv);
  out.error(message);
}

/**
 * One command from a script, answered on `out`. Redis's refusals come first, in its words: an
 * unknown command, a wrong count of arguments, a command no script may run (MULTI, blocking
 * commands, CLIENT, …), a write from a read-only script, a write while the append-only file
 * cannot be written (MISCONF) or while min-replicas-to-write wants replicas (NOREPLICAS), and
 * anything that may grow the data past maxmemory — unless `mayGrow`: the script has written (and
 * must be let finish) or allows OOM.
 */

function scriptCall(engine: Server, session: Session, argv: string[], out: RespWriter, readOnly: boolean, mayGrow: boolean): void {
  const resolved = engine.resolve(argv);
  if (typeof resolved === "string") {
    const arity = resolved.startsWith("ERR wrong number of arguments");
    return refuseCall(engine, argv, out, arity ? "ERR Wrong number of args calling Redis command from script" : "ERR Unknown Redis command called from script");
  }
  const traits = traitsOf(resolved);
  if ((traits & traitNoscript) !== 0) return refuseCall(engine, argv, out, "ERR This Redis command is not allowed from script");
  const refusal = engine.refusal(session, resolved, argv, "lua");
  if (refusal !== null) return refuseCall(engine, argv, out, scriptNoPermission(refusal));
  if (readOnly && (traits & (traitWrite | traitMayReplicate)) !== 0)
    return refuseCall(engine, argv, out, "ERR Write commands are not allowed from read-only scripts.");
  // A write's refusals in Redis's order (scriptVerifyWriteCommandAllow, then scriptVerifyOOM).
  if ((traits & traitWrite) !== 0) {
    const persistFailure = engine.aof?.failureReason ?? null;
    if (persistFailure !== null) return refuseCall(engine, argv, out, cannotPersist(persistFailure).message);
    if (engine.writesWantReplicas) return refuseCall(engine, argv, out, noReplicas().message);
  }
  if (!mayGrow && engine.overMaxmemory && (traits & traitDenyoom) !== 0) return refuseCall(engine, argv, out, overMaxmemory().message);
  engine.run(resolved, session, argv, out);
}

/** What a library's redis.log lines go to while it loads; it can call no command then. */
export function libraryLoadHost(engine: Server): ScriptHost {
  return {
    call: () => {
      throw new Error("a library called a command while loading: its redis has no call then");
    },
    log: (line) => logLine(engine, line),
    ask: () => {
      throw new Error("a library asked the server something while loading: its redis has no setresp or acl_check_cmd then");
    },
  };
}

/** A redis.log line (its level byte, then its text) at Redis's levels: debug, verbose, notice, warning. */
function logLine(engine: Server, line: Buffer): void {
  logAt(engine, line[0]!, line.toString("latin1", 1));
}

function logAt(engine: Server, level: number, text: string): void {
  const fields = { script: true };
  if (level >= 3) engine.log.warn(fields, text);
  else if (level === 2) engine.log.info(fields, text);
  else engine.log.debug(fields, text);
}
