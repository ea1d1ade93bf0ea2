/**
 * One run of a script: its redis.call and redis.pcall, each a command run for the script's client
 * as that client would run it, with what Redis refuses a script on top (scriptCall below).
 *
 * A script is atomic, as in Redis: nothing else runs until it ends, and the append-only file gets
 * its writes between MULTI and EXEC, so a replay applies all of them or none. A SELECT inside it
 * holds for the rest of the script only.
 */
import { luaAnswerAllowed, luaAnswerDenied, luaAnswerUnknownCommand, luaAskSetProtocol } from "../../native/addon.ts";
import { scriptNoPermission } from "../acl/acl-users.ts";
import { lookupCommand } from "../commands/table.ts";
import type { Engine } from "../engine.ts";
import { cannotPersist, KvError, overMaxmemory } from "../errors.ts";
import { RespWriter } from "../resp/writer.ts";
import type { Session } from "../session.ts";
import type { Latin1Buffer } from "../resp/write-bytes.ts";
import type { LuaState, ScriptHost, ScriptReply } from "./lua-state.ts";
import type { ScriptFlags } from "./shebang.ts";
import { unpackWords } from "./words.ts";

/** A script that has not written by then is ended; one that has runs on (as in Redis). */
const scriptTimeLimitMsDefault = 5000;

/** How a command's answer says it changed data: its low bit, or the first byte of a long reply's buffer. */
const changedFlag = 1;

/** What each command a script runs writes its reply with, into the mailbox unless it outgrows it. */
const scratch = new RespWriter();

/** A script or function as a run names it. */
export interface RunTarget {
  /** The Lua state that holds it, and its number there. */
  state: LuaState;
  id: number;
  /** What it declared (a shebang, a function's flags). */
  flags: ScriptFlags;
}

/** One script's run as the server sees it: its client, and whether it has written yet. */
class ScriptRun implements ScriptHost {
  wrote = false;
  /** The protocol the script's commands reply in: RESP2 until it calls redis.setresp(3). */
  private protocol: 2 | 3 = 2;
  /** Errors of the commands the script runs count in INFO errorstats, as a client's do. */
  private readonly countError = (message: string) => this.engine.stats.errorReplied(message);

  constructor(
    private readonly engine: Engine,
    private readonly session: Session,
    private readonly readOnly: boolean,
    private readonly allowOom: boolean,
  ) {}

  call(words: Buffer, inMailbox: boolean, mailbox: Latin1Buffer): number | Uint8Array {
    // Read before the reply is written over them.
    const argv = unpackWords(words, !inMailbox);
    const out = scratch;
    out.buffer = mailbox;
    out.start = 0;
    out.length = 0;
    out.onError = this.countError;
    out.protocol = this.protocol;
    const dirtyBefore = this.engine.dirty;
    scriptCall(this.engine, this.session, argv, out, this.readOnly, this.allowOom || this.wrote);
    const changed = this.engine.dirty !== dirtyBefore;
    this.wrote ||= changed;
    if (out.buffer === mailbox) return out.length * 2 + (changed ? changedFlag : 0);
    const reply = new Uint8Array(1 + out.length);
    reply[0] = changed ? changedFlag : 0;
    reply.set(out.buffer.subarray(0, out.length), 1);
    return reply;
  }

  log(line: Buffer): void {
    logLine(this.engine, line);
  }

  ask(question: number, argument: number | Buffer): number {
    if (question === luaAskSetProtocol) {
      this.protocol = argument === 3 ? 3 : 2;
      return 0;
    }
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
function mayRun(engine: Engine, session: Session, argv: string[]): boolean | null {
  const spec = lookupCommand(argv[0]!);
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
 * Runs a script or function for `session` (`readOnly`: EVAL_RO, FCALL_RO); returns its reply (to
 * be used before the next run). One that declared its flags is held to them first, as Redis 7.0
 * holds it: a read-only command runs only one that declared no-writes, and past maxmemory one
 * runs only if it declared allow-oom or no-writes.
 */
export function runScript(
  engine: Engine, session: Session, target: RunTarget, keys: readonly string[], args: readonly string[], readOnly: boolean,
): ScriptReply {
  const flags = target.flags;
  if (flags.declared && readOnly && !flags.noWrites) throw new KvError("ERR Can not execute a script with write flag using *_ro command.");
  if (flags.declared && !flags.noWrites && !flags.allowOom && engine.overMaxmemory) throw overMaxmemory();
  const run = new ScriptRun(engine, session, readOnly || flags.noWrites, flags.allowOom);
  const dbIndex = session.dbIndex;
  // Inside EXEC the transaction's own MULTI/EXEC already wraps the script's writes.
  const wraps = !session.inExec;
  if (wraps) engine.aof?.beginTransaction();
  session.inScript = true;
  try {
    return target.state.run(target.id, keys, args, timeLimitMs(engine), run);
  } finally {
    session.inScript = false;
    if (wraps) engine.aof?.endTransaction();
    session.dbIndex = dbIndex;
  }
}

/**
 * One command from a script, answered on `out`. Redis's refusals come first, in its words: an
 * unknown command, a wrong count of arguments, a command no script may run (MULTI, blocking
 * commands, CLIENT, …), a write from a read-only script, and anything that may grow the data past
 * maxmemory — unless `mayGrow`: the script has written (and must be let finish) or allows OOM.
 */
function scriptCall(engine: Engine, session: Session, argv: string[], out: RespWriter, readOnly: boolean, mayGrow: boolean): void {
  const resolved = engine.resolve(argv);
  if (typeof resolved === "string") {
    const arity = resolved.startsWith("ERR wrong number of arguments");
    return out.error(arity ? "ERR Wrong number of args calling Redis command from script" : "ERR Unknown Redis command called from script");
  }
  const flags = resolved.flags;
  if (flags.includes("noscript")) return out.error("ERR This Redis command is not allowed from script");
  const refusal = engine.refusal(session, resolved, argv, "lua");
  if (refusal !== null) return out.error(scriptNoPermission(refusal));
  if (readOnly && flags.includes("write")) return out.error("ERR Write commands are not allowed from read-only scripts.");
  if (!mayGrow && engine.overMaxmemory && flags.includes("denyoom")) return out.error(overMaxmemory().message);
  const persistFailure = engine.aof?.failureReason ?? null;
  if (persistFailure !== null && flags.includes("write")) return out.error(cannotPersist(persistFailure).message);
  engine.run(resolved, session, argv, out);
}

/** busy-reply-threshold (lua-time-limit) in ms, as CONFIG SET left it. */
function timeLimitMs(engine: Engine): number {
  const configured = Number(engine.config.get("busy-reply-threshold") ?? engine.config.get("lua-time-limit"));
  return Number.isInteger(configured) && configured > 0 ? Math.min(configured, 2 ** 32 - 1) : scriptTimeLimitMsDefault;
}

/** What a library's redis.log lines go to while it loads; it can call no command then. */
export function libraryLoadHost(engine: Engine): ScriptHost {
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
function logLine(engine: Engine, line: Buffer): void {
  const level = line[0]!;
  const text = line.toString("latin1", 1);
  const fields = { script: true };
  if (level >= 3) engine.log.warn(fields, text);
  else if (level === 2) engine.log.info(fields, text);
  else engine.log.debug(fields, text);
}
