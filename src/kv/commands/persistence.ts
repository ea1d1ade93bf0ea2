/**
 * Persistence commands. svc persists through the append-only file only (no RDB snapshots), so:
 * - BGREWRITEAOF rewrites it (aof/rewrite.ts);
 * - SAVE makes everything written so far durable (write and fdatasync) before answering, which
 *   is what a caller of SAVE relies on; BGSAVE does the same in the background;
 * - LASTSAVE answers when that last happened (at first, when the server started);
 * - SHUTDOWN writes and syncs the file, then stops the server as SIGTERM does.
 * Without an append-only file there is nothing to save to, and SAVE/BGSAVE say so.
 */
import { busyScriptError } from "../scripting/busy-script.ts";
import { KvError, syntaxError } from "../text/errors.ts";
import type { AppendLog } from "../aof/append-log.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";

const noFile = () => new KvError("ERR svc persists through the append-only file, which is off (start it with --appendonly yes)");

/** The append-only file, if it is on: not while CONFIG SET appendonly no is closing it. */
function openFile(x: Exec): AppendLog {
  const aof = x.engine.aof;
  if (aof === null || aof.isClosing) throw noFile();
  return aof;
}

function bgrewriteaof(x: Exec): void {
  openFile(x);
  if (!x.engine.startRewrite()) throw new KvError("ERR Background append only file rewriting already in progress");
  x.reply.simple("Background append only file rewriting started");
}

function save(x: Exec): void {
  const aof = openFile(x);
  // With appendfsync always the reply already waits for the sync that covers every write before
  // it (connection.ts); writing here could reorder bytes a sync in flight is still writing.
  if (aof.syncsEveryWrite) void aof.syncNow();
  else {
    try {
      aof.flushSync();
    } catch {
      throw new KvError(`ERR Errors writing to the AOF file: ${aof.failureReason ?? "unknown error"}`);
    }
  }
  saved(x.engine);
  x.reply.simple("OK");
}

/** Everything written up to when the engine's change count was `dirty` is on disk. */
function saved(engine: Exec["engine"], dirty = engine.dirty): void {
  engine.lastSaveMs = engine.clock.nowMs();
  engine.persistence.dirtyAtLastSave = dirty;
  engine.persistence.saves++;
}

function bgsave(x: Exec, argv: string[]): void {
  if (argv.length > 2 || (argv.length === 2 && argv[1]!.toUpperCase() !== "SCHEDULE")) throw new KvError("ERR syntax error");
  const aof = openFile(x);
  const engine = x.engine;
  const state = engine.persistence;
  const dirty = engine.dirty;
  state.bgsaveInProgress = true;
  void aof.syncNow().then(() => {
    state.bgsaveInProgress = false;
    // A write or sync that failed is kept, not thrown: the log says whether it holds now.
    state.lastBgsaveOk = aof.failureReason === null;
    if (state.lastBgsaveOk) saved(engine, dirty);
  });
  x.reply.simple("Background saving started");
}

/**
 * SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7 reads it. There are no snapshots to
 * save (NOSAVE and SAVE change nothing) and no replicas to wait for (NOW changes nothing, and
 * ABORT finds no shutdown to abort). The file is written and synced first, unless it cannot be
 * and FORCE was not given: then the server stays up and says so. On success nothing is answered;
 * the connection closes as the server stops.
 */
function shutdown(x: Exec, argv: string[]): void {
  const options = new Set<string>();
  for (let i = 1; i < argv.length; i++) {
    const option = argv[i]!.toUpperCase();
    if (!["NOSAVE", "SAVE", "NOW", "FORCE", "ABORT"].includes(option)) throw syntaxError();
    options.add(option);
  }
  if ((options.has("NOSAVE") && options.has("SAVE")) || (options.has("ABORT") && options.size > 1)) throw syntaxError();
  if (options.has("ABORT")) throw new KvError("ERR No shutdown in progress.");
  const engine = x.engine;
  // A busy script may have written half of what it means to: only NOSAVE stops the server then,
  // as in Redis (the append-only file's loader drops the script's unclosed transaction).
  const busy = engine.busyScript;
  if (busy !== null && !options.has("NOSAVE")) throw new KvError(busyScriptError[busy.kind]);
  const aof = engine.aof;
  // Under `always` everything answered is synced already, and the stop syncs the rest after the
  // sync in flight (writing here could land before bytes that sync is still writing).
  if (aof !== null && !aof.syncsEveryWrite && !aof.isClosing) {
    try {
      aof.flushSync();
    } catch (error) {
      engine.log.warn({ err: error }, "SHUTDOWN could not write the append-only file");
      if (!options.has("FORCE")) throw new KvError("ERR Errors trying to SHUTDOWN. Check logs.");
    }
  }
  if (engine.onShutdown === null) throw new KvError("ERR Errors trying to SHUTDOWN. Check logs.");
  engine.log.warn("SHUTDOWN: stopping");
  engine.onShutdown();
}

export const persistenceCommands: readonly CommandSpec[] = [
  {
    name: "bgrewriteaof",
    arity: 1,
    flags: ["admin", "noscript", "no_async_loading"],
    group: "server",
    summary: "Rewrites the append-only file.",
    run: bgrewriteaof,
  },
  {
    name: "save",
    arity: 1,
    flags: ["admin", "noscript", "no_multi", "no_async_loading"],
    group: "server",
    summary: "Makes every write so far durable.",
    run: save,
  },
  {
    name: "bgsave",
    arity: -1,
    flags: ["admin", "noscript", "no_async_loading"],
    group: "server",
    summary: "Makes every write so far durable, in the background.",
    run: bgsave,
  },
  {
    name: "shutdown",
    arity: -1,
    flags: ["admin", "noscript", "loading", "stale", "no_multi", "allow_busy"],
    group: "server",
    summary: "Writes and syncs the append-only file, then stops the server.",
    run: shutdown,
  },
  {
    name: "lastsave",
    arity: 1,
    flags: ["loading", "stale", "fast"],
    group: "server",
    summary: "Returns when data was last made durable.",
    run: (x) => x.reply.integer(Math.floor(x.engine.lastSaveMs / 1000)),
  },
];
