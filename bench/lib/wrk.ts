/**
 * wrk as the benchmarks drive it (broker, kv REST): one run of a Lua script, read back as requests
 * per second and the latency percentiles of `--latency`. A non-2xx answer or a socket error fails
 * the run, so a table never shows the rate of a server that was answering errors.
 */
import { writeFileSync } from "node:fs";

export interface WrkRun {
  /** Full URL; a script that builds its own requests still takes host and port from it. */
  url: string;
  /** Lua source; written next to `scriptPath` for wrk to load. */
  script: string;
  scriptPath: string;
  threads: number;
  connections: number;
  seconds: number;
  /** wrk's request timeout; a synced 1 MB produce on a slow disk can pass wrk's 2 s default. */
  timeoutSeconds: number;
}

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** wrk prints latencies with a unit suffix; everything here is reported in milliseconds. */
const msPerUnit: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

export function latencyMs(out: string, percentile: string): number {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(out);
  if (match === null) throw new Error(`no ${percentile}% latency in wrk output:\n${out}`);
  return Number(match[1]) * msPerUnit[match[2]!]!;
}

export async function wrk(r: WrkRun): Promise<WrkResult> {
  writeFileSync(r.scriptPath, r.script);
  const argv = [
    "wrk",
    "--latency",
    "-t",
    String(r.threads),
    "-c",
    String(r.connections),
    "-d",
    `${r.seconds}s`,
    "--timeout",
    `${r.timeoutSeconds}s`,
    "-s",
    r.scriptPath,
    r.url,
  ];
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${await new Response(proc.stderr).text()}`);
  if (/Non-2xx or 3xx responses/.test(out) || /Socket errors/.test(out)) throw new Error(`wrk saw errors:\n${out}`);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (rate === null) throw new Error(`no rate in wrk output:\n${out}`);
  return { requestsPerSec: Number(rate[1]), p50Ms: latencyMs(out, "50"), p99Ms: latencyMs(out, "99") };
}
