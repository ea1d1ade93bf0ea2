/**
 * A script that has run past busy-reply-threshold, kept as Redis 7.0 keeps one. The native side
 * stops it between slices (native/script/src/run.rs) and the engine resumes it from the event
 * loop (Engine.scriptBusy), so that meanwhile:
 *
 * - other clients are answered BUSY, except for the commands flagged allow_busy: SCRIPT KILL,
 *   FUNCTION KILL, FUNCTION STATS, SHUTDOWN NOSAVE, AUTH, HELLO, MULTI, DISCARD, WATCH, UNWATCH,
 *   QUIT and RESET;
 * - nothing else changes the data and nothing shows it half done: the cron (expiry, eviction)
 *   waits, and no client blocked on a key is served until the script ends;
 * - the script's own client sends nothing more until its reply (its later commands wait);
 * - SCRIPT KILL (or FUNCTION KILL, for FCALL) ends it with an error unless it has written, after
 *   which only SHUTDOWN NOSAVE stops it — and the append-only file, holding its writes inside a
 *   MULTI it never closed, drops them when loaded.
 *
 * What the interrupted command would have done after the script — write its reply, finish its
 * statistics, run the rest of an EXEC — is kept here as steps run in order when the script ends.
 */
import type { Session } from "../server/session.ts";
import type { LuaState, ScriptHost, ScriptReply } from "./lua-state.ts";

/** What kind of script it is: the BUSY error and which KILL may end it depend on it. */
export type ScriptKind = "eval" | "function";

/** The BUSY errors of Redis 7.0, for a script and for a function. */
export const busyScriptError: Record<ScriptKind, string> = {
  eval: "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
  function: "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.",
};

/** The run behind a busy script: it answers the script's commands and knows whether it wrote. */
export interface BusyRun extends ScriptHost {
  readonly wrote: boolean;
}

export class BusyScript {
  /** Steps to take with the script's reply when it ends, in the order they were given. */
  private readonly afterwards: ((reply: ScriptReply) => void)[] = [];
  /** SCRIPT KILL or FUNCTION KILL asked for its end; the next slice ends it. */
  private killAsked = false;
  /** The client asked for no reply to this command (CLIENT REPLY SKIP). */
  dropsReply = false;

  constructor(
    private readonly state: LuaState,
    private readonly run: BusyRun,
    /** The client whose command runs it. */
    readonly session: Session,
    readonly kind: ScriptKind,
    /** The function's name, or the script's SHA-1. */
    readonly name: string,
    /** The command that runs it, as its client sent it (FUNCTION STATS shows it). */
    readonly argv: readonly string[],
    /** When it started (monotonic ms). */
    readonly startedMs: number,
  ) {}

  get wrote(): boolean {
    return this.run.wrote;
  }

  get killed(): boolean {
    return this.killAsked;
  }

  /** SCRIPT KILL or FUNCTION KILL: the next slice ends the script with Redis's error. */
  kill(): void {
    this.killAsked = true;
  }

  /** Runs `step` with the script's reply once it has ended, after the steps given before it. */
  whenDone(step: (reply: ScriptReply) => void): void {
    this.afterwards.push(step);
  }

  /** Runs the script for one more slice: its reply if it ended, or null if it is busy still. */
  slice(): ScriptReply | null {
    const session = this.session;
    session.inScript = true;
    try {
      return this.state.resume(this.killAsked, this.run);
    } finally {
      session.inScript = false;
    }
  }

  /**
   * Takes the steps kept for the end with `reply` (which may be in the scripts' mailbox: it is
   * read by the first step that writes it). A reply the client asked not to get is dropped.
   */
  end(reply: ScriptReply): void {
    const transport = this.session.transport;
    const mark = transport?.outputMark?.();
    for (const step of this.afterwards) step(reply);
    if ((this.dropsReply || this.session.repliesOff) && mark !== undefined) transport!.dropOutputFrom!(mark);
  }
}
