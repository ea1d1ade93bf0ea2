/**
 * Appending a batch of chunks to a file: one vectored write at its end (a broker segment) or
 * positional writes at a given offset (the kv append-only file, whose tail may hold a fill
 * appended ahead of its end), and, when asked, one fdatasync. The native path does these on a
 * worker thread, so the JavaScript thread keeps serving while the disk syncs; the references do
 * the same with node:fs calls that block it.
 *
 * Contract for all: `fd` stays open until the promise settles — open for appending for
 * appendChunks, for writing (not appending) for writeChunksAt — and one write at a time runs per
 * file (the log's writer awaits each flush before the next; batching whatever arrived meanwhile
 * into that next flush is what makes one sync cover many requests).
 */
import { fdatasyncSync, fstatSync, writevSync } from "node:fs";
import { writeAll } from "../core/write-all.ts";
import { nativeAddon } from "./addon.ts";
import { stampFramesReference } from "./frames.ts";

/**
 * What a flush of broker record frames laid out before it (src/broker/log/record.ts) writes into
 * them on the way to disk: chunk i's frames get offsets from `baseOffsets[i]`, `timestampMs` and
 * their CRCs, as stampFramesReference does — on the worker thread, so the JavaScript thread never spends a
 * flush's checksumming. The chunks are the append's until it settles: nothing may read them.
 */
export interface ChunkStamps {
  baseOffsets: number[];
  timestampMs: number;
  /** The largest frame body a chunk may hold. */
  bodyBytesMax: number;
}

/** Appends `chunks` in order, stamped first when `stamps` is given; resolves to the file's length afterwards. */
export function appendChunks(fd: number, chunks: Uint8Array[], sync: boolean, stamps?: ChunkStamps): Promise<number> {
  if (stamps === undefined) return nativeAddon.appendChunks(fd, chunks, sync);
  return nativeAddon.appendStampedChunks(fd, chunks, stamps.baseOffsets, stamps.timestampMs, stamps.bodyBytesMax, sync);
}

/** writev may take only part of a batch; this is the loop that finishes it. */
function writevAll(fd: number, chunks: Uint8Array[]): void {
  let pending = chunks.filter((c) => c.length > 0);
  while (pending.length > 0) {
    let written = writevSync(fd, pending);
    while (pending.length > 0 && written >= pending[0]!.length) {
      written -= pending[0]!.length;
      pending = pending.slice(1);
    }
    if (written > 0) pending = [pending[0]!.subarray(written), ...pending.slice(1)];
  }
}

export async function appendChunksReference(fd: number, chunks: Uint8Array[], sync: boolean, stamps?: ChunkStamps): Promise<number> {
  if (stamps !== undefined && stamps.baseOffsets.length !== chunks.length) {
    throw new RangeError("one safe, non-negative base offset per chunk and a safe timestamp are needed");
  }
  if (stamps !== undefined) chunks.forEach((chunk, i) => stampFramesReference(chunk, stamps.baseOffsets[i]!, stamps.timestampMs, stamps.bodyBytesMax));
  writevAll(fd, chunks);
  if (sync) fdatasyncSync(fd);
  return fstatSync(fd).size;
}

/** Writes `chunks` in order from byte `position` (the file may go on past it); then fdatasync if `sync`. */
export function writeChunksAt(fd: number, chunks: Uint8Array[], position: number, sync: boolean): Promise<void> {
  return nativeAddon.writeChunksAt(fd, chunks, position, sync);
}

export async function writeChunksAtReference(fd: number, chunks: Uint8Array[], position: number, sync: boolean): Promise<void> {
  let at = position;
  for (const chunk of chunks) {
    writeAll(fd, chunk, chunk.length, at);
    at += chunk.length;
  }
  if (sync) fdatasyncSync(fd);
}
