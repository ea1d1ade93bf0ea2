/**
 * Small files that must be whole after a crash (a topic's config, a producer snapshot): written to a temporary name,
 * synced, renamed over the real name, and the directory synced so the rename itself is durable.
 * A reader therefore sees the old file or the new one, never half of either.
 */
import { closeSync, fsyncSync, openSync, renameSync } from "node:fs";
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
