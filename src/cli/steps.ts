/**
 * Runs a sequence of child processes as named steps with their output shown live, then prints a
 * summary with each step's time and outcome. Used by `svc test` and `svc bench`.
 */

export interface Step {
  name: string;
  cmd: string[];
  cwd: string;
  env?: Record<string, string>;
}

export interface StepOutcome {
  name: string;
  exitCode: number;
  seconds: number;
}

const say = (line: string) => process.stderr.write(`[svc] ${line}\n`);

export async function runSteps(steps: Step[]): Promise<StepOutcome[]> {
  const outcomes: StepOutcome[] = [];
  for (const step of steps) {
    say(`▶ ${step.name}: ${step.cmd.join(" ")}`);
    const started = performance.now();
    const child = Bun.spawn(step.cmd, {
      cwd: step.cwd,
      env: { ...process.env, ...step.env },
      stdio: ["inherit", "inherit", "inherit"],
    });
    const exitCode = await child.exited;
    const seconds = (performance.now() - started) / 1000;
    say(`${exitCode === 0 ? "✔" : "✘"} ${step.name} (${seconds.toFixed(1)}s${exitCode === 0 ? "" : `, exit ${exitCode}`})`);
    outcomes.push({ name: step.name, exitCode, seconds });
  }
  return outcomes;
}

/** Prints the summary table and returns the exit code for the whole run. */
export function summarize(outcomes: StepOutcome[]): number {
  const width = Math.max(...outcomes.map((o) => o.name.length));
  say("summary:");
  for (const o of outcomes) {
    say(`  ${o.name.padEnd(width)}  ${o.exitCode === 0 ? "passed" : `FAILED (exit ${o.exitCode})`}  ${o.seconds.toFixed(1)}s`);
  }
  return outcomes.every((o) => o.exitCode === 0) ? 0 : 1;
}
