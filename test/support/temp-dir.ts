/**
 * Temporary directories for tests, removed once every test has run (after-all-tests.ts, which
 * bunfig.toml preloads), or once `svc bench kv` ends (its servers are the tests'). Tests that
 * made their own and left them — a server's directory, one a property run — left ~1,000 a suite
 * run in the machine's temporary directory: 95,000, 12 GB, on the machine this was found on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/** A new directory in the machine's temporary directory, its name starting with `prefix`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory tempDir made so far, whatever they hold. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
