// The ./svc bootstrap: a second run with nothing changed goes straight to the CLI, and a failing
// build step stops with the step's name, the tail of its log and how to retry.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const repo = join(import.meta.dir, "..");
const scratch = mkdtempSync(join(tmpdir(), "svc-bootstrap-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function run(cmd: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn(cmd, { cwd: options.cwd ?? repo, env: { ...process.env, ...options.env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** A copy of the tracked tree (a clone without history) sharing this checkout's node_modules. */
async function miniClone(): Promise<string> {
  const dir = join(scratch, "clone");
  const { stdout } = await run(["git", "ls-files", "-z"]);
  // A tracked file deleted in the working tree (not yet committed) is not part of the copy.
  for (const file of stdout.split("\0").filter((f) => f !== "" && existsSync(join(repo, f)))) {
    mkdirSync(join(dir, dirname(file)), { recursive: true });
    cpSync(join(repo, file), join(dir, file));
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  return dir;
}

describe("./svc bootstrap", () => {
  test("a second run with nothing changed runs no setup step and reaches the CLI", async () => {
    await run(["./svc", "--help"]);
    const { stdout, stderr, code } = await run(["./svc", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("usage: svc <command>");
    expect(stderr).not.toContain("[svc]");
  });

  test("a failing native build names the step, shows its log's tail and how to retry", async () => {
    const clone = await miniClone();
    const fakeBin = join(scratch, "bin");
    mkdirSync(fakeBin);
    writeFileSync(join(fakeBin, "cargo"), "#!/bin/sh\necho 'error[E0000]: a fake compiler failure' >&2\nexit 101\n");
    chmodSync(join(fakeBin, "cargo"), 0o755);
    const { stderr, code } = await run(["./svc", "--help"], {
      cwd: clone,
      env: { PATH: `${fakeBin}:${process.env.PATH}`, SVC_CACHE_DIR: join(scratch, "cache") },
    });
    expect(code).toBe(1);
    expect(stderr).toContain("[svc] native build (cargo, release) …");
    expect(stderr).toMatch(/step 'native build \(cargo, release\)' failed \(exit \d+\) after \d+s/);
    expect(stderr).toContain("a fake compiler failure");
    expect(stderr).toContain("[svc] to retry: ./svc");
  });
});
