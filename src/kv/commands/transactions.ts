/**
 * MULTI, EXEC, DISCARD, WATCH, UNWATCH. Commands sent after MULTI are checked when queued (an
 * unknown command or a wrong arity makes EXEC answer EXECABORT) and run together by EXEC, unless a
 * watched key changed, in which case EXEC answers the null array and runs nothing.
 */
import { noPermissionAtExec } from "../acl/acl-users.ts";
import { KvError } from "../text/errors.ts";
import type { Server } from "../kit/server.ts";
import type { QueuedCommand, Session } from "../server/session.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";

function multi(x: Exec): void {
  if (x.session.multi !== null) throw new KvError("ERR MULTI calls can not be nested");
  x.session.multi = [];
  x.session.multiFailed = false;
  x.reply.simple("OK");
}

/** Leaves MULTI, if in it, and forgets the watched keys (EXEC, DISCARD, RESET). */
export function endTransaction(x: Exec): void {
  discardTransaction(x.engine, x.session);
}

/** Leaves MULTI, if in it, and forgets the watched keys (EXEC, DISCARD, RESET, a refused EXEC). */
export function discardTransaction(engine: Server, session: Session): void {
  session.multi = null;
  session.multiFailed = false;
  engine.watches.unwatchAll(session);
}

function exec(x: Exec): void {
  const queued = x.session.multi;
  if (queued === null) throw new KvError("ERR EXEC without MULTI");
  if (x.session.multiFailed) {
    endTransaction(x);
    throw new KvError("EXECABORT Transaction discarded because of previous errors.");
  }
  const dirty = x.engine.watches.isDirty(x.session, x.engine.dbs);
  endTransaction(x);
  if (dirty) return x.reply.array(null);
  x.reply.array(queued.length);
  // Queued commands run back to back with nothing in between, and blocking ones do not block.
  // EXEC is timed alone, and ends the timing of the commands it ran when it ends.
  x.session.inExec = true;
  x.session.execQueue = queued;
  x.engine.aof?.beginTransaction();
  // Its commands judge keys' times against EXEC's start, as Redis's: a key whose time passes
  // while they run stays for all of them.
  x.engine.fixCommandTime();
  runQueued(x, queued, 0);
}

/**
 * Runs the queue from `from` on. A script in it that goes busy (scripting/busy-script.ts) stops
 * the queue: the rest runs once the script has ended, in the same transaction.
 */
function runQueued(x: Exec, queued: readonly QueuedCommand[], from: number): void {
  const engine = x.engine;
  try {
    for (let i = from; i < queued.length; i++) {
      const { spec, argv } = queued[i]!;
      // The user's permissions may have changed since the command was queued.
      const refusal = engine.refusal(x.session, spec, argv, "multi");
      if (refusal === null) engine.run(spec, x.session, argv, x.reply);
      else x.reply.error(noPermissionAtExec(refusal));
      const busy = engine.busyScript;
      if (busy !== null) {
        busy.whenDone(() => runQueued(x, queued, i + 1));
        return;
      }
    }
  } catch (error) {
    endExec(x);
    throw error;
  }
  endExec(x);
}

function endExec(x: Exec): void {
  x.session.inExec = false;
  x.session.execQueue = null;
  x.engine.aof?.endTransaction();
}

function discard(x: Exec): void {
  if (x.session.multi === null) throw new KvError("ERR DISCARD without MULTI");
  endTransaction(x);
  x.reply.simple("OK");
}

function watch(x: Exec, argv: string[]): void {
  if (x.session.multi !== null) throw new KvError("ERR WATCH inside MULTI is not allowed");
  for (let i = 1; i < argv.length; i++) x.engine.watches.watch(x.session, x.db, argv[i]!);
  x.reply.simple("OK");
}

const flags = ["noscript", "loading", "stale", "fast", "allow_busy"] as const;

export const transactionCommands: readonly CommandSpec[] = [
  { name: "multi", arity: 1, flags, group: "transactions", summary: "Starts a transaction.", run: multi },
  { name: "exec", arity: 1, flags: ["noscript", "loading", "stale", "skip_slowlog"], group: "transactions", summary: "Runs the queued commands.", run: exec },
  { name: "discard", arity: 1, flags, group: "transactions", summary: "Drops the queued commands.", run: discard },
  { name: "watch", arity: -2, flags, group: "transactions", summary: "Makes EXEC depend on keys staying unchanged.", keys: [1, -1, 1], run: watch },
  {
    name: "unwatch",
    arity: 1,
    flags,
    group: "transactions",
    summary: "Forgets the watched keys.",
    run: (x) => {
      x.engine.watches.unwatchAll(x.session);
      x.reply.simple("OK");
    },
  },
];
