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
 *
 * Lines starting with '#' between commands are annotations, skipped as Redis 7 skips them (it
 * writes `#TS:<unix time>` ones with aof-timestamp-enabled).
 *
 * Under `appendfsync always` the log writes '#' bytes ahead of its end (LogFile.fillAhead), and
 * a process killed meanwhile leaves them: one annotation with no newline running to the end of
 * the file, which Redis and redis-check-aof skip too. The commands end at the file's last byte
 * that is neither '#' nor zero (every command ends in "\n"; earlier versions of svc wrote zeros
 * ahead), and what follows is cut off at start. Were a machine to fail mid-write, a torn command
 * would run into the '#' bytes; ending the commands where the fill begins makes it the torn tail
 * it is. Zeros followed by more commands are corruption like any other bytes that are not RESP.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, truncateSync } from "node:fs";
import type { Logger } from "../../core/log.ts";
import { SvcError } from "../../core/errors.ts";
import type { Server } from "../kit/server.ts";
import type { Reply } from "../kit/reply.ts";
import { type ParseOutput, ProtocolError, RespParser } from "../resp/parser.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import { Session } from "../server/session.ts";
import { annotationByte } from "./log-file.ts";

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
  boolean(): void {}
  bigNumber(): void {}
}

/** Whether buffer[from, to) is the command name MSET, in any case. */
function isMset(buffer: Uint8Array, from: number, to: number): boolean {
  return (
    to - from === 4 &&
    (buffer[from]! | 0x20) === 0x6d &&
    (buffer[from + 1]! | 0x20) === 0x73 &&
    (buffer[from + 2]! | 0x20) === 0x65 &&
    (buffer[from + 3]! | 0x20) === 0x74
  );
}

const LF = 0x0a;

/**
 * The file's parser: multibulk commands and annotation lines only. Redis's loader refuses
 * anything else ("Bad file format"), and so do we; a client's inline commands are for typing, and
 * a line of them in the file would be damage. (The network parser, reading a NUL where a command
 * starts, waits for a newline that never comes, as Redis does: here that would pass zeros inside
 * the file off as a torn tail and cut away the commands after them.)
 *
 * It also says where each command starts in the file, and where the file is whole up to, which
 * the loader cuts back to.
 */
class FileParser extends RespParser {
  /** Bytes fed so far. */
  private fed = 0;
  /** Where each command of the last feed starts, as a byte offset in the file. */
  readonly starts: number[] = [];
  /** Where the last complete command or annotation ends: the file is whole up to here. */
  boundary = 0;
  /**
   * For each command of the last feed, the byte ranges of its arguments (from, to, from, to, …
   * after the name, in `bytes`) when it is an MSET read without making strings of them (its
   * argv then holds "" for each), else null. A rewritten file is mostly MSETs of plain strings
   * (rewrite.ts), and making a string of every key and value only to copy it back into the key
   * table cost about a third of the load (docs/kv.md).
   */
  readonly byteArgs: (number[] | null)[] = [];
  /** The ranges of the MSET being read, while one is. */
  private msetRanges: number[] | null = null;

  override feed(chunk: Uint8Array): ParseOutput {
    this.fed += chunk.length;
    this.starts.length = 0;
    this.byteArgs.length = 0;
    const output = super.feed(chunk);
    // The next feed moves the bytes of a command cut off by this one's end: it needs its strings.
    if (this.msetRanges !== null) {
      for (let i = 0; i < this.msetRanges.length; i += 2) this.args[1 + i / 2] = this.buffer.latin1Slice(this.msetRanges[i]!, this.msetRanges[i + 1]!);
      this.msetRanges = null;
    }
    return output;
  }

  /** The bytes byteArgs point into, until the next feed. */
  get bytes(): Latin1Buffer {
    return this.buffer;
  }

  /** The strings of an MSET kept as byte ranges, for the path every other command takes. */
  argvOf(argv: string[], ranges: readonly number[]): string[] {
    return [argv[0]!, ...Array.from({ length: ranges.length / 2 }, (_, i) => this.buffer.latin1Slice(ranges[i * 2]!, ranges[i * 2 + 1]!))];
  }

  protected override argument(position: number, from: number, to: number): string {
    if (position === 0) {
      // argsLeft still counts the name: an MSET of whole pairs (a wrong one goes the usual way, to its error).
      this.msetRanges = this.argsLeft >= 3 && this.argsLeft % 2 === 1 && isMset(this.buffer, from, to) ? [] : null;
      return super.argument(position, from, to);
    }
    if (this.msetRanges === null) return super.argument(position, from, to);
    this.msetRanges.push(from, to);
    return "";
  }

  protected override multibulk(): string[] | null | undefined {
    const command = super.multibulk();
    if (command === undefined) return undefined;
    if (command !== null) {
      this.starts.push(this.boundary);
      this.byteArgs.push(this.msetRanges);
    }
    this.msetRanges = null;
    this.boundary = this.fed - this.pendingBytes;
    return command;
  }

  /** An annotation, skipped up to and including its newline; anything else that is not '*' is damage. */
  protected override inline(): null | undefined {
    const byte = this.buffer[this.start]!;
    if (byte !== annotationByte) {
      throw new ProtocolError(`expected '*' at the start of a command, found byte 0x${byte.toString(16).padStart(2, "0")}`);
    }
    const lf = this.buffer.indexOf(LF, this.start);
    if (lf === -1 || lf >= this.end) return undefined;
    this.start = lf + 1;
    this.boundary = this.fed - this.pendingBytes;
    return null;
  }
}

export interface LoadResult {
  commands: number;
  /** Bytes of the file after loading (after cutting off a damaged tail). */
  sizeBytes: number;
}

/** Bytes the loader reads at a time: the file is streamed through the parser, not read whole. */
export const loadChunkBytes = 4 * 1024 * 1024;
/** Bytes read at a time, from the end back, looking for where the commands end. */
const tailScanBytes = 64 * 1024;

export interface LoadOptions {
  /** Bytes read at a time (tests split files small); loadChunkBytes by default. */
  chunkBytes?: number;
  /**
   * aof-load-truncated: a file that ends inside a command loads up to the last complete one (true,
   * Redis's default) or refuses to start, so that a person decides (false).
   */
  loadTruncated?: boolean;
}

export function loadAppendLog(engine: Server, path: string, log: Logger, options: LoadOptions = {}): LoadResult {
  const chunkBytes = options.chunkBytes ?? loadChunkBytes;
  if (!existsSync(path)) return { commands: 0, sizeBytes: 0 };
  const fd = openSync(path, "r");
  let fileBytes: number;
  let dataBytes: number;
  let commands = 0;
  let offset = 0;
  /** Where the transaction being replayed began: a tail cut inside it drops it whole. */
  let multiOffset: number | null = null;
  /** Commands loaded before that transaction: what counts if it is dropped. */
  let commandsBeforeMulti = 0;
  const reply = new LoadReply();
  // Not registered with the engine: like Redis's loading client, it is not a connection that
  // INFO counts or CLIENT LIST shows.
  const session = new Session(reply, null);
  session.authenticated = true;
  session.replaying = true;
  engine.loading = true;
  try {
    fileBytes = fstatSync(fd).size;
    dataBytes = endOfCommands(fd, fileBytes);
    // The file holds whatever clients were allowed to write: no bulk limit below the file itself.
    const parser = new FileParser(Math.max(dataBytes, 1));
    const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(dataBytes, 1)));
    for (let at = 0; at < dataBytes; ) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, dataBytes - at), at);
      if (read === 0) break; // the file shrank under us: what was read is all there is
      at += read;
      const parsed = parser.feed(chunk.subarray(0, read));
      const timeMs = engine.clock.monotonicMs();
      for (let i = 0; i < parsed.commands.length; i++) {
        const argv = parsed.commands[i]!;
        const resolved = engine.resolve(argv);
        if (typeof resolved === "string") throw corrupt(path, parser.starts[i]!, resolved);
        // A MULTI inside a transaction is refused when replayed (as nested MULTI is): the
        // transaction still began at the first.
        if (resolved.name === "multi" && multiOffset === null) {
          multiOffset = parser.starts[i]!;
          commandsBeforeMulti = commands;
        } else if (resolved.name === "exec" || resolved.name === "discard") multiOffset = null;
        const ranges = parser.byteArgs[i]!;
        if (ranges !== null && session.multi === null) engine.replayMsetBytes(session, parser.bytes, ranges);
        // Queued in a transaction, it runs after these bytes are gone: as strings.
        else engine.replay(session, resolved, ranges === null ? argv : parser.argvOf(argv, ranges), reply, timeMs);
        commands++;
      }
      // After the last complete command or annotation, not inside one still incomplete.
      offset = parser.boundary;
      if (parsed.error !== null) throw corrupt(path, offset, parsed.error);
    }
  } finally {
    engine.loading = false;
    closeSync(fd);
    // Forgets anything the file's commands left on the session (a WATCH, an unfinished MULTI).
    engine.unregister(session);
  }
  if (reply.errors > 0) {
    log.warn(
      { path, errors: reply.errors, first: reply.firstError },
      "commands in the append-only file answered errors when replayed; their effects, if any, are loaded",
    );
  }
  const validBytes = multiOffset ?? offset;
  if (multiOffset !== null) commands = commandsBeforeMulti;
  if (validBytes < dataBytes && options.loadTruncated === false) {
    throw new SvcError(
      "data_corrupt",
      `append-only file ${path} ends inside a command at byte ${validBytes}, and aof-load-truncated is no; refusing to start. Cut the tail with redis-check-aof --fix, or start with --aof-load-truncated yes`,
    );
  }
  if (validBytes < dataBytes) {
    log.warn(
      { path, loadedBytes: validBytes, droppedBytes: dataBytes - validBytes, openTransaction: multiOffset !== null },
      "append-only file ended inside a command (a crash mid-write): loaded up to the last complete one and cut the file there",
    );
  }
  if (validBytes < fileBytes) truncateSync(path, validBytes);
  return { commands, sizeBytes: validBytes };
}

/** Where the commands in the file end: after its last byte that is neither '#' nor zero (see the top). */
function endOfCommands(fd: number, fileBytes: number): number {
  const block = Buffer.allocUnsafe(Math.min(tailScanBytes, Math.max(fileBytes, 1)));
  for (let end = fileBytes; end > 0; ) {
    const from = Math.max(0, end - block.length);
    // readSync may return less than asked: fill the block before looking at it (a file that
    // shrank meanwhile reads as zeros where it ended).
    for (let got = 0; got < end - from; ) {
      const read = readSync(fd, block, got, end - from - got, from + got);
      if (read === 0) block.fill(0, got, end - from);
      got = read === 0 ? end - from : got + read;
    }
    for (let i = end - from - 1; i >= 0; i--) if (block[i] !== 0 && block[i] !== annotationByte) return from + i + 1;
    end = from;
  }
  return 0;
}

function corrupt(path: string, offset: number, detail: string): SvcError {
  return new SvcError(
    "data_corrupt",
    `append-only file ${path} is corrupt at byte ${offset} (${detail}); refusing to start. Inspect it with redis-check-aof, or move it away to start empty`,
  );
}
