/**
 * The commands a compiled run has made, and their replies, so that Lua can run the script again
 * from its start when the compiled run bails (compiled-script.ts): Lua's run makes the same
 * commands in the same order, since everything it computes before a command is what the compiled
 * run computed, and each is answered from here rather than run again — the keyspace already
 * holds its effect — until Lua reaches the point where the compiled run stopped and goes on live.
 *
 * Log lines (redis.log) are left out the same way: Lua's run logs the same lines in the same order,
 * and the first as many as the compiled run logged are not logged twice.
 *
 * A command Lua makes that differs from the one recorded at its place would be a bug in the
 * compiled path: the record is dropped, the command runs live, and the run is reported
 * (`mismatched`) so that tests fail on it.
 */
import { grownBuffer, type Latin1Buffer } from "../../text/write-bytes.ts";

/** Replies up to this long are copied byte by byte (bytes). */
const copyByLoopBytesMax = 64;
/** The record's first buffer of replies (bytes); it grows as a run's replies need. */
const replyBytesInitial = 16 * 1024;

export class CallRecord {
  private argvs: (readonly string[])[] = [];
  /** Where each reply ends in `bytes`; each starts where the one before ended. */
  private ends: number[] = [];
  private bytes = Buffer.allocUnsafe(replyBytesInitial) as Latin1Buffer;
  private length = 0;
  /** The next recorded command Lua's run is answered from; -1 when not replaying. */
  private replayAt = -1;
  /** Replays that met a command other than the recorded one (a bug; counted for tests and logs). */
  mismatched = 0;
  /** Lines the compiled run logged (redis.log), and how many of Lua's run's are still to be left out. */
  private logs = 0;
  private logsToSkip = 0;

  /** Forgets every command: a new compiled run begins. */
  clear(): void {
    this.argvs.length = 0;
    this.ends.length = 0;
    this.length = 0;
    this.replayAt = -1;
    this.logs = 0;
    this.logsToSkip = 0;
  }

  /** The compiled run logged a line. */
  logged(): void {
    this.logs++;
  }

  /** Whether Lua's run's next log line is one the compiled run logged already (and is left out). */
  skipsLog(): boolean {
    if (this.logsToSkip === 0) return false;
    this.logsToSkip--;
    return true;
  }

  get size(): number {
    return this.argvs.length;
  }

  /** Records `argv` (kept, not copied: nothing changes a command's words) and its reply `reply[0, end)`. */
  add(argv: readonly string[], reply: Uint8Array, end: number): void {
    if (this.length + end > this.bytes.length) this.bytes = grownBuffer(this.bytes, 0, this.length, this.length + end);
    const bytes = this.bytes;
    const at = this.length;
    // Most replies are a few bytes: copied here, rather than through a view and a native call.
    if (end <= copyByLoopBytesMax) for (let i = 0; i < end; i++) bytes[at + i] = reply[i]!;
    else bytes.set(reply.subarray(0, end), at);
    this.length += end;
    this.argvs.push(argv);
    this.ends.push(this.length);
  }

  /** Lua's run begins: its commands are answered from the record until it runs out. */
  startReplay(): void {
    this.replayAt = this.argvs.length > 0 ? 0 : -1;
    this.logsToSkip = this.logs;
  }

  get replaying(): boolean {
    return this.replayAt >= 0;
  }

  /**
   * The recorded reply to Lua's command `argv`, as the bytes [from, to) of `record`, or null when
   * it is to run live (the record is used up, or differs).
   */
  answer(argv: readonly string[]): { bytes: Latin1Buffer; from: number; to: number } | null {
    const at = this.replayAt;
    const recorded = this.argvs[at]!;
    if (!sameWords(recorded, argv)) {
      this.mismatched++;
      this.replayAt = -1;
      return null;
    }
    this.replayAt = at + 1 < this.argvs.length ? at + 1 : -1;
    return { bytes: this.bytes, from: at === 0 ? 0 : this.ends[at - 1]!, to: this.ends[at]! };
  }
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
