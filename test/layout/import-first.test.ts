/**
 * Every module under src/ loads when it is the first one a process imports. A module that only
 * works because another happened to load before it ("Cannot access … before initialization")
 * breaks the first tool, test or service that imports it alone; this catches it.
 */
import { expect, test } from "bun:test";
import { join, relative } from "node:path";
import { typeScriptFiles } from "../support/import-graph.ts";

const root = join(import.meta.dir, "../..");
/** Entry points run a command when loaded, so importing them is not a check of their imports. */
const entryPoints = new Set(["src/cli.ts"]);
/** Processes at once: a fresh Bun takes ~20 ms to import one module. */
const parallelProcesses = 4;

test("every module under src/ can be imported first, on its own", async () => {
  const modules = typeScriptFiles(join(root, "src"))
    .map((file) => relative(root, file))
    .filter((file) => !entryPoints.has(file));
  expect(modules.length).toBeGreaterThan(300);
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < modules.length) {
      const module = modules[next++]!;
      const child = Bun.spawn([process.execPath, "-e", `await import(${JSON.stringify(`./${module}`)})`], { cwd: root, stdout: "ignore", stderr: "pipe" });
      const [exitCode, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      if (exitCode !== 0) failures.push(`${module}: ${stderr.split("\n").find((line) => /Error/.test(line)) ?? `exit ${exitCode}`}`);
    }
  };
  await Promise.all(Array.from({ length: parallelProcesses }, worker));
  expect(failures).toEqual([]);
}, 120_000);
