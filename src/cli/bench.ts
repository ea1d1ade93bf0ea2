/**
 * `svc bench [name...]`: runs benchmarks in bench/, each as its own process, then records what
 * each printed in bench/RESULTS.md (the latest result of every benchmark, one section each) and
 * prints where it differs from what was recorded there. bench-results.ts has the format.
 */
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, relative, resolve } from "node:path";
import { defaultIntro, describeUpdate, formatResultsFile, parseBenchOutput, parseResultsFile, serviceOf, services, updateSections } from "./bench-results.ts";
import { flag, formatHelp, parseConfig } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import type { Command } from "./command.ts";
import { repoRoot } from "./paths.ts";
import { runSteps, type StepOutcome, summarize } from "./steps.ts";

const benchDir = join(repoRoot, "bench");
const defaultResultsFile = join(benchDir, "RESULTS.md");
const flags = {
  list: flag.bool({ default: false, help: "list the benchmarks and exit" }),
  record: flag.bool({
    default: true,
    help: "write the sections of the benchmarks that ran into the results file, replacing their recorded ones; --no-record only compares",
  }),
  resultsFile: flag.string({ help: "the results file to compare with and record in (default bench/RESULTS.md of the repository)" }),
  noisePercent: flag.int({ default: 10, min: 0, max: 1000, help: "a ratio that moved by more than this many percent is reported as changed" }),
};

export function benchNames(): string[] {
  return readdirSync(benchDir)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** The line that heads a results table: when and where it was measured. */
function machineLine(): string {
  const cpu = cpus();
  return `${new Date().toISOString().slice(0, 10)} · ${cpu[0]?.model ?? "unknown CPU"} · ${cpu.length} cores · Bun ${Bun.version}`;
}

/** The commit the benchmarks ran on, and whether tracked files differed from it; "" outside git. */
function commitLine(): string {
  // Read-only: no optional locks, so a commit running beside the benchmark is not disturbed.
  const env = { ...process.env, GIT_OPTIONAL_LOCKS: "0" };
  const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: repoRoot, env, stderr: "ignore" });
  if (head.exitCode !== 0) return "";
  const status = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: repoRoot, env, stderr: "ignore" });
  const dirty = status.exitCode === 0 && status.stdout.toString().trim() !== "";
  return ` at ${head.stdout.toString().trim()}${dirty ? " with uncommitted changes" : ""}`;
}

const say = (line: string) => process.stderr.write(`[svc] ${line}\n`);

/**
 * Compares one benchmark's output with the results file at `path` (absent: empty) and, when
 * `record`, writes its sections there. Returns the comparison to print; says on stderr what it
 * did not do and why.
 */
export function recordBenchOutput(outcome: StepOutcome, measured: string, path: string, record: boolean, noise: number): string[] {
  const shown = relative(process.cwd(), path) || path;
  if (outcome.exitCode !== 0) {
    say(`${outcome.name} failed: its output is not compared or recorded`);
    return [];
  }
  const sections = parseBenchOutput(outcome.stdout ?? "", measured);
  if (sections.length === 0) {
    say(`${outcome.name} printed no "### " section: nothing to compare or record`);
    return [];
  }
  // Read again for every benchmark: the file may have changed during a long run.
  const current = parseResultsFile(existsSync(path) ? readFileSync(path, "utf8") : "");
  if (current.intro.length === 0) current.intro = [...defaultIntro];
  const { file, updates } = updateSections(current, sections);
  const report = [`compared with ${shown}:`];
  for (const update of updates) report.push(...describeUpdate(update, { noise }).map((l) => `  ${l}`));
  // A service's benchmark that no longer prints a recorded section leaves it as it was: say so.
  if ((services as readonly string[]).includes(outcome.name)) {
    const ran = new Set(updates.map((u) => u.next));
    for (const left of file.sections.filter((s) => serviceOf(s.title) === outcome.name && !ran.has(s))) {
      report.push(`  ${left.title}: not printed by this run, left as recorded${left.measured === "" ? "" : ` (${left.measured})`}`);
    }
  }
  if (record) {
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, formatResultsFile(file));
    renameSync(temporary, path);
    say(`recorded ${updates.length} section(s) of ${outcome.name} in ${shown}`);
  }
  return report;
}

export const benchCommand: Command = {
  name: "bench",
  summary: "run benchmarks (all, or those named), print their tables with ratios, record them in bench/RESULTS.md",
  help: () =>
    [
      "usage: svc bench [flags] [name...]",
      "",
      "Runs the benchmarks named (all without names), each as its own process, showing what it prints.",
      'After each, compares its "### " sections with the recorded ones in the results file and prints',
      "where they differ: ratios (× values, percentages of the raw disk) that moved beyond the noise band,",
      "rows and tables that appeared or went, verdicts whose words changed. Then, unless --no-record, it",
      "replaces those sections in the file (a new benchmark's is added; the others are left as they are),",
      'each under a "> Measured <date> · <machine> — by ./svc bench … at <commit>" line. The file keeps only',
      "the latest result of each benchmark; its history is in git (git log -p bench/RESULTS.md).",
      "Use --no-record for quick looks with lowered counts (SVC_BENCH_KV_REQUESTS …) or on a busy machine.",
      "",
      `benchmarks: ${benchNames().join(", ")}`,
      "",
      "flags:",
      formatHelp(flags, "SVC_BENCH"),
    ].join("\n"),
  async run(args) {
    const { values, positionals } = parseConfig(flags, args, process.env, "SVC_BENCH");
    const known = benchNames();
    if (values.list) {
      console.log(known.join("\n"));
      return 0;
    }
    const unknown = positionals.filter((n) => !known.includes(n));
    if (unknown.length > 0) throw new SvcError("bad_config", `no benchmark named ${unknown.join(", ")}; there are ${known.join(", ")}`);
    const resultsFile = values.resultsFile === undefined ? defaultResultsFile : resolve(values.resultsFile);
    const machine = machineLine();
    const measured = `${machine} — by \`./svc bench${positionals.map((n) => ` ${n}`).join("")}\`${commitLine()}`;
    console.log(`## svc bench — ${machine}`);
    const names = positionals.length > 0 ? positionals : known;
    const outcomes: StepOutcome[] = [];
    for (const name of names) {
      const [outcome] = await runSteps([{ name, cmd: [process.execPath, join(benchDir, `${name}.ts`)], cwd: repoRoot, captureStdout: true }]);
      outcomes.push(outcome!);
      const report = recordBenchOutput(outcome!, measured, resultsFile, values.record, values.noisePercent / 100);
      if (report.length > 0) console.log(`\n${report.join("\n")}\n`);
    }
    return summarize(outcomes);
  },
};
