/**
 * The append-only file as bytes on disk: where its commands end, and the space written ahead of
 * that end under `appendfsync always`. AppendLog decides what goes in and when; this says where.
 *
 * An fdatasync after an append must commit the file's new length to the journal. A write into
 * space already allocated, written and inside the file's length syncs without changing metadata,
 * which on ext4 skips that commit (~90 µs a sync instead of ~150 here). So under `always` the file
 * keeps fill written ahead of its end, and commands are written at a position, not appended. The
 * fill is appended through a second descriptor opened for appending, so it can never land on
 * commands written while it runs: each append goes after whatever the file holds then.
 *
 * The fill is '#' bytes and no newline: after the last command, the rest of the file is one
 * annotation line, which Redis's loader and redis-check-aof skip (Redis 7 writes `#TS:` lines).
 * So the file of a running or killed server is one they accept, whatever part of the fill the
 * commands have overwritten; zeros would read as a bad format there, and so would any newline in
 * the fill (Redis reads lines in 1 KiB pieces: one starting at a newline is not an annotation). A
 * clean close cuts the fill off, and so does the next start (load.ts).
 */
import { close, closeSync, constants, fstatSync, ftruncateSync, openSync } from "node:fs";
import { writeAll } from "../../core/write-all.ts";
import { appendChunks } from "../../native/append.ts";

/** '#': the first byte of an annotation line (a fill of them pads the file's tail; load.ts skips them). */
export const annotationByte = 0x23;

/**
 * Fill is kept written this far ahead of the commands' end, refilled once less than half is left.
 * Filling is a write and a sync of its own that the next sync waits for: ~2 MiB at a time keeps
 * that wait to a few milliseconds.
 */
const fillAheadBytes = 4 * 1024 * 1024;
/** The bytes one fill appends at most, as pieces of one shared buffer. */
const fillPieceBytes = 1024 * 1024;
/** The fill is one annotation line with no end (see the top). */
const fillPiece = new Uint8Array(fillPieceBytes).fill(annotationByte);

export class LogFile {
  /** Open for positional writes (not O_APPEND: the file may go on past the commands' end). */
  readonly fd: number;
  /** The same file opened for appending: where the fill goes. */
  private readonly appendFd: number;
  /** Bytes of commands the file holds: where the next write lands. */
  sizeBytes: number;
  /** The file's length: sizeBytes and the fill written ahead of it. */
  private allocatedBytes: number;
  /** Whether fill is written ahead in this file (not after a fill has failed). */
  private fillsAhead = true;

  /** Opens `path`, whose commands end at `sizeBytes` (by default, where the file ends). */
  constructor(
    readonly path: string,
    sizeBytes?: number,
  ) {
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT, 0o644);
    this.appendFd = openSync(path, "a");
    const length = fstatSync(this.fd).size;
    this.sizeBytes = sizeBytes ?? length;
    this.allocatedBytes = Math.max(this.sizeBytes, length);
  }

  /** Writes `bytes` at the commands' end, on this thread. */
  write(bytes: Uint8Array, end = bytes.length): void {
    writeAll(this.fd, bytes, end, this.sizeBytes);
    this.claim(end);
  }

  /** Takes the next `length` bytes for commands written elsewhere (the worker); returns where they start. */
  claim(length: number): number {
    const position = this.sizeBytes;
    this.sizeBytes += length;
    this.allocatedBytes = Math.max(this.allocatedBytes, this.sizeBytes);
    return position;
  }

  /**
   * Cuts the file at the commands' end: the fill before a clean close, or whatever part of a
   * failed write reached the file (the next try writes it whole at the same place anyway, but a
   * file cut there is one redis-check-aof accepts meanwhile). Throws what ftruncate throws.
   */
  cutAtEnd(): void {
    this.allocatedBytes = this.sizeBytes;
    ftruncateSync(this.fd, this.sizeBytes);
  }

  /** Appends fill once less than half of fillAheadBytes is left past the commands' end. */
  async fillAhead(): Promise<void> {
    if (!this.fillsAhead || this.allocatedBytes - this.sizeBytes >= fillAheadBytes / 2) return;
    const pieces: Uint8Array[] = [];
    for (let bytes = this.sizeBytes + fillAheadBytes - this.allocatedBytes; bytes > 0; bytes -= fillPieceBytes) {
      pieces.push(bytes >= fillPieceBytes ? fillPiece : fillPiece.subarray(0, bytes));
    }
    try {
      this.allocatedBytes = await appendChunks(this.appendFd, pieces, true);
    } catch {
      // A full disk, say. The fill only makes syncs cheaper: commands are written without it,
      // and trying again before every sync would make each one slower instead.
      this.fillsAhead = false;
    }
  }

  /** Closes both descriptors; the file stays as it is. */
  close(): void {
    closeSync(this.fd);
    closeSync(this.appendFd);
  }

  /**
   * Closes both descriptors off this thread, for a file a rewrite has replaced: closing its last
   * descriptor frees its blocks, which held the event loop 24 ms for a 30 MiB file here. Redis
   * closes its old file in a background thread for the same reason. A failed close of a file
   * nobody uses any more leaves nothing to do, so its error is dropped.
   */
  closeInBackground(): void {
    for (const fd of [this.fd, this.appendFd]) close(fd, () => {});
  }
}
