/**
 * Small files that must be whole after a crash (a topic's config, a producer snapshot): written to a temporary name,
 * synced, renamed over the real name, and the directory synced so the rename itself is durable.
 * A reader therefore sees the old file or the new one, never half of either.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { SvcError } from "./errors.ts";
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

/** A file of ours that cannot be read back: the service refuses to start on it rather than lose what it held. */
export function damagedFile(path: string, why: string): SvcError {
  return new SvcError("data_corrupt", `${path} is damaged: ${why}`);
}

/**
 * The JSON object stored at `path` (written whole by writeFileAtomic) as `{"version": version, ...}`,
 * or null when there is none yet. The leftover of an interrupted write is removed first. Bytes that
 * are not a JSON object, or another version, are a damaged file (data_corrupt); the caller checks
 * the fields it needs with damagedFile.
 */
export function readStoredJson(path: string, version: number): Record<string, unknown> | null {
  rmSync(`${path}${tempSuffix}`, { force: true });
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw damagedFile(path, `not JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw damagedFile(path, "not a JSON object");
  const file = parsed as Record<string, unknown>;
  if (file.version !== version) throw damagedFile(path, `version ${JSON.stringify(file.version ?? null)}, expected ${version}`);
  return file;
}
