/**
 * Small files that must be whole after a crash (a topic's config, a producer snapshot): written to a temporary name,
 * synced, renamed over the real name, and the directory synced so the rename itself is durable.
 * A reader therefore sees the old file or the new one, never half of either.
 */
import { closeSync, fsyncSync, openSync, renameSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { writeAll } from "./write-all.ts";

/** Suffix of a file being written; recovery removes leftovers with it. */
export const tempSuffix = ".tmp";

/** Makes the entries of `dir` (files created, renamed or removed in it) durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `path` with `data` atomically and durably. */
export function writeFileAtomic(path: string, data: string): void {
  const temp = `${path}${tempSuffix}`;
  const fd = openSync(temp, "w");
  try {
    writeAll(fd, Buffer.from(data));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDir(dirname(path));
}

/**
 * writeFileAtomic off the event loop: the write and both syncs run on the runtime's I/O threads,
 * so a file rewritten on a timer (a consumer group's offsets) never stalls requests. Callers
 * must not run two at once on one path (they share the temporary name).
 */
export async function writeFileAtomicAsync(path: string, data: string): Promise<void> {
  const temp = `${path}${tempSuffix}`;
  const file = await open(temp, "w");
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
