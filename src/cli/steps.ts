/**
 * Runs a sequence of child processes as named steps with their output shown live, then prints a
 * summary with each step's time and outcome. Used by `svc test` and `svc bench`.
 */

export interface Step {
  name: string;
  cmd: string[];
  cwd: string;
  env?: Record<string, string>;
  /** Keep a copy of what the step writes to stdout (still shown live) in its outcome. */
  captureStdout?: boolean;
}

export interface StepOutcome {
  name: string;
  exitCode: number;
  seconds: number;
  /** What the step wrote to stdout, when its step asked for captureStdout. */
  stdout?: string;
}

/**
 * How long to keep reading a captured stdout after its step exited: a process the step left
 * behind may hold the pipe open, and must not keep the run waiting.
 */
const drainAfterExitMs = 2000;

/** Copies a child's stdout to ours as it comes; `collected` resolves to all of it once the child has exited. */
function tee(stream: ReadableStream<Uint8Array>): { collected: (exited: Promise<unknown>) => Promise<string> } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const drained = (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      process.stdout.write(chunk.value);
      text += decoder.decode(chunk.value, { stream: true });
    }
  })();
  return {
    async collected(exited) {
      await exited;
      const finished = await Promise.race([drained.then(() => true), Bun.sleep(drainAfterExitMs).then(() => false)]);
      if (!finished) await reader.cancel().catch(() => {});
      return text + decoder.decode();
    },
  };
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
      stdio: ["inherit", step.captureStdout ? "pipe" : "inherit", "inherit"],
    });
    const captured = step.captureStdout ? tee(child.stdout as ReadableStream<Uint8Array>).collected(child.exited) : undefined;
    const exitCode = await child.exited;
    const stdout = await captured;
    const seconds = (performance.now() - started) / 1000;
    say(`${exitCode === 0 ? "✔" : "✘"} ${step.name} (${seconds.toFixed(1)}s${exitCode === 0 ? "" : `, exit ${exitCode}`})`);
    outcomes.push({ name: step.name, exitCode, seconds, ...(stdout === undefined ? {} : { stdout }) });
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
