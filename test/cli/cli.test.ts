// The svc CLI's surface: help at every level, usage errors with exit code 2, and bad flags
// answered with the flag's name rather than a stack trace.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const cli = join(import.meta.dir, "../../src/cli.ts");

async function svc(...args: string[]) {
  const proc = Bun.spawn([process.execPath, cli, ...args], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("svc CLI", () => {
  test("--help lists every command and exits 0", async () => {
    const { stdout, code } = await svc("--help");
    expect(code).toBe(0);
    for (const name of ["up", "test", "bench"]) expect(stdout).toMatch(new RegExp(`^  ${name} `, "m"));
  });

  test("no command prints usage and exits 2", async () => {
    const { stdout, code } = await svc();
    expect(code).toBe(2);
    expect(stdout).toContain("usage: svc <command>");
  });

  test("an unknown command is named, with usage, exit 2", async () => {
    const { stderr, code } = await svc("frobnicate");
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "frobnicate"');
  });

  for (const name of ["up", "test", "bench"]) {
    test(`svc ${name} --help describes its flags and exits 0 without running anything`, async () => {
      const { stdout, stderr, code } = await svc(name, "--help");
      expect(code).toBe(0);
      expect(stdout).toStartWith(`usage: svc ${name}`);
      expect(stdout).toContain("flags:");
      expect(stderr).toBe("");
    });
  }

  test("a bad flag is a usage error naming the flag, not a crash", async () => {
    const { stderr, code } = await svc("up", "--log-level", "loud");
    expect(code).toBe(2);
    expect(stderr).toContain('--log-level: expected one of trace, debug, info, warn, error, fatal, silent, got "loud"');
    expect(stderr).not.toContain("    at ");
  });

  test("svc bench --list names the benchmarks in bench/", async () => {
    const { stdout, code } = await svc("bench", "--list");
    expect(code).toBe(0);
    expect(stdout.split("\n")).toEqual(expect.arrayContaining(["append", "crc32c", "murmur64a"]));
  });

  test("svc bench with an unknown name says which exist", async () => {
    const { stderr, code } = await svc("bench", "nosuch");
    expect(code).toBe(2);
    const benchmarks = readdirSync(join(import.meta.dir, "../../bench"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(benchmarks).toContain("kv");
    expect(stderr).toContain(`no benchmark named nosuch; there are ${benchmarks.join(", ")}`);
  });

  test("svc test --only with an unknown step lists the steps", async () => {
    const { stderr, code } = await svc("test", "--only", "format");
    expect(code).toBe(2);
    expect(stderr).toContain('unknown step "format"; steps are lint, typecheck, bun, cargo, worker');
  });
});
