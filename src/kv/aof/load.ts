/**
 * Loading the append-only file at start: every command is run through the engine again, as
 * Redis does, before any client connects.
 *
 * Damage is handled as Redis does with `aof-load-truncated yes`:
 * - a file that ends inside a command (the process died mid-write) loads up to the last complete
 *   command, is cut back to it, and the log says so; a transaction the tail cut off (MULTI
 *   without its EXEC) is dropped whole;
 * - anything else — bytes that are not RESP, an unknown command — refuses to start, naming the
 *   byte offset, because guessing past corruption could load wrong data.
 */
import { existsSync, readFileSync, truncateSync } from "node:fs";
import type { Logger } from "../../core/log.ts";
import { SvcError } from "../../core/errors.ts";
import type { Engine } from "../engine.ts";
import type { Reply } from "../reply.ts";
import { RespParser } from "../resp/parser.ts";
import { Session } from "../session.ts";
import { encodedBytes } from "./command-buffer.ts";

/**
 * Replies to loaded commands are dropped, as Redis drops them; errors are counted, and the first
 * kept, for one warning at the end (a file written by svc replays without any).
 */
class LoadReply implements Reply {
  protocol: 2 | 3 = 2;
  errors = 0;
  firstError: string | null = null;
  simple(): void {}
  error(message: string): void {
    this.errors++;
    this.firstError ??= message;
  }
  integer(): void {}
  bulk(): void {}
  bulkBytes(): void {}
  array(): void {}
  map(): void {}
  set(): void {}
  double(): void {}
  push(): void {}
  verbatim(): void {}
}

export interface LoadResult {
  commands: number;
  /** Bytes of the file after loading (after cutting off a damaged tail). */
  sizeBytes: number;
}

export function loadAppendLog(engine: Engine, path: string, log: Logger): LoadResult {
  if (!existsSync(path)) return { commands: 0, sizeBytes: 0 };
  const bytes = readFileSync(path);
  // The file holds whatever clients were allowed to write: no bulk limit below the file itself.
  const parser = new RespParser(Math.max(bytes.length, 1));
  const { commands, error } = parser.feed(bytes);
  const reply = new LoadReply();
  const session = new Session(reply, null);
  engine.register(session);
  session.authenticated = true;
  let offset = 0;
  /** Where the transaction being replayed began: a tail cut inside it drops it whole. */
  let multiOffset: number | null = null;
  try {
    for (const argv of commands) {
      const resolved = engine.resolve(argv);
      if (typeof resolved === "string") throw corrupt(path, offset, resolved);
      if (resolved.name === "multi") multiOffset = offset;
      else if (resolved.name === "exec") multiOffset = null;
      engine.execute(session, argv, reply);
      offset += encodedBytes(argv);
    }
  } finally {
    engine.settleTiming();
    engine.unregister(session);
  }
  if (error !== null) throw corrupt(path, offset, error);
  if (reply.errors > 0) {
    log.warn({ path, errors: reply.errors, first: reply.firstError }, "commands in the append-only file answered errors when replayed; their effects, if any, are loaded");
  }
  const validBytes = multiOffset ?? offset;
  if (validBytes < bytes.length) {
    truncateSync(path, validBytes);
    log.warn(
      { path, loadedBytes: validBytes, droppedBytes: bytes.length - validBytes, openTransaction: multiOffset !== null },
      "append-only file ended inside a command (a crash mid-write): loaded up to the last complete one and cut the file there",
    );
  }
  return { commands: commands.length, sizeBytes: validBytes };
}

function corrupt(path: string, offset: number, detail: string): SvcError {
  return new SvcError(
    "data_corrupt",
    `append-only file ${path} is corrupt at byte ${offset} (${detail}); refusing to start. Inspect it with redis-check-aof, or move it away to start empty`,
  );
}
