/**
 * `svc test`: the whole suite — lint and format check, type-check, bun test (test/ and fuzz/), cargo test,
 * and the mediasoup worker's C++ unit tests.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { flag, formatHelp, parseConfig } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import type { Command } from "./command.ts";
import { cacheDir, repoRoot } from "./paths.ts";
import { runSteps, type Step, summarize } from "./steps.ts";

const stepNames = ["lint", "typecheck", "bun", "cargo", "worker"] as const;
/**
 * Per-test time limit of the bun step. Tests start real server processes, a browser or a
 * PostgreSQL; on a shared 2-core machine one can take seconds to schedule, past bun's 5 s default.
 * (bunfig.toml has no such setting: bun reads it only from --timeout.)
 */
const bunTestTimeoutMs = 30_000;

/** The mediasoup worker's unit tests, installed by ./svc next to the worker (docs/media-worker.md). */
const workerTestBin = join(repoRoot, "media-worker/dist/mediasoup-worker-test");

const flags = {
  only: flag.list({ default: [], help: `run only these steps (${stepNames.join(", ")}); repeatable or comma-separated` }),
};

function steps(bunTestArgs: string[]): Record<(typeof stepNames)[number], Step> {
  return {
    // Biome (biome.json): the formatter's layout and the linter's rules, checked without writing;
    // `node_modules/.bin/biome check --write` applies both (docs/foundation.md, "Code style").
    lint: { name: "lint", cmd: [join(repoRoot, "node_modules/.bin/biome"), "ci", "--colors=off"], cwd: repoRoot },
    typecheck: { name: "typecheck", cmd: [join(repoRoot, "node_modules/.bin/tsc"), "-p", repoRoot], cwd: repoRoot },
    bun: { name: "bun", cmd: [process.execPath, "test", "--timeout", String(bunTestTimeoutMs), ...bunTestArgs], cwd: repoRoot },
    cargo: {
      name: "cargo",
      cmd: ["cargo", "test", "--quiet", "--manifest-path", join(repoRoot, "native/Cargo.toml")],
      cwd: repoRoot,
      // Shares the bootstrap's target directory, outside the repository.
      env: { CARGO_TARGET_DIR: join(cacheDir, "cargo-target") },
    },
    // The worker's Catch2 tests (media-worker/build compiled them, and ran them once, with the
    // worker ./svc installed): a binary of its own, so this step takes a fraction of a second.
    worker: existsSync(workerTestBin)
      ? { name: "worker", cmd: [workerTestBin], cwd: repoRoot }
      : {
          name: "worker",
          cmd: ["sh", "-c", 'echo "$0 is missing: run ./svc once to build it" >&2; exit 1', workerTestBin],
          cwd: repoRoot,
        },
  };
}

export const testCommand: Command = {
  name: "test",
  summary: "run every test: lint and format check, type-check, bun test (test/, fuzz/), cargo test, the worker's C++ tests",
  help: () =>
    `usage: svc test [flags] [bun test filters...]\n\nRuns the whole suite; filters narrow the bun step (e.g. svc test http).\n\nflags:\n${formatHelp(flags, "SVC_TEST")}`,
  async run(args) {
    const { values, positionals } = parseConfig(flags, args, process.env, "SVC_TEST");
    const only = values.only.flatMap((s) => s.split(",")).filter((s) => s !== "");
    for (const name of only) {
      if (!(stepNames as readonly string[]).includes(name)) {
        throw new SvcError("bad_config", `--only: unknown step ${JSON.stringify(name)}; steps are ${stepNames.join(", ")}`);
      }
    }
    const all = steps(positionals);
    const chosen = stepNames.filter((name) => only.length === 0 || only.includes(name)).map((name) => all[name]);
    return summarize(await runSteps(chosen));
  },
};
