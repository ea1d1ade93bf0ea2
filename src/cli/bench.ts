/** `svc bench [name...]`: runs benchmarks in bench/, each as its own process. */
import { readdirSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { flag, formatHelp, parseConfig } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import type { Command } from "./command.ts";
import { repoRoot } from "./paths.ts";
import { runSteps, summarize } from "./steps.ts";

const benchDir = join(repoRoot, "bench");
const flags = { list: flag.bool({ default: false, help: "list the benchmarks and exit" }) };

export function benchNames(): string[] {
  return readdirSync(benchDir).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3)).sort();
}

/** The line that heads a results table: when and where it was measured. */
function machineLine(): string {
  const cpu = cpus();
  return `${new Date().toISOString().slice(0, 10)} · ${cpu[0]?.model ?? "unknown CPU"} · ${cpu.length} cores · Bun ${Bun.version}`;
}

export const benchCommand: Command = {
  name: "bench",
  summary: "run benchmarks (all, or those named) and print comparison tables with ratios",
  help: () =>
    `usage: svc bench [flags] [name...]\n\nbenchmarks: ${benchNames().join(", ")}\n\nflags:\n${formatHelp(flags, "SVC_BENCH")}`,
  async run(args) {
    const { values, positionals } = parseConfig(flags, args, process.env, "SVC_BENCH");
    const known = benchNames();
    if (values.list) {
      console.log(known.join("\n"));
      return 0;
    }
    const unknown = positionals.filter((n) => !known.includes(n));
    if (unknown.length > 0) throw new SvcError("bad_config", `no benchmark named ${unknown.join(", ")}; there are ${known.join(", ")}`);
    console.log(`## svc bench — ${machineLine()}`);
    const names = positionals.length > 0 ? positionals : known;
    const steps = names.map((name) => ({ name, cmd: [process.execPath, join(benchDir, `${name}.ts`)], cwd: repoRoot }));
    return summarize(await runSteps(steps));
  },
};
