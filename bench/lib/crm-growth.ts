/**
 * Creates through the API as the table grows, for bench/crm.ts: wrk posting a fixed number of
 * records (a slice), so the server's cost per create can be read slice by slice as the rows add
 * up. wrk itself only runs for a duration; here each thread counts its answers and stops its own
 * loop at its share of the slice, says so on stdout, and once every thread has, the run is
 * interrupted (SIGINT: wrk stops waiting and prints its statistics as after a duration). A thread
 * that stops leaves at most its connections' requests in flight, which the server still completes:
 * the benchmark counts the rows in the store, not wrk's answers.
 *
 * The requests rotate over the given bodies and bearer tokens (body i as token i mod tokens), all
 * formatted once per thread, so the client's Lua does little per request and the server, not
 * wrk, is what sets the pace. A non-2xx answer or a socket error fails the run, as in wrk.ts.
 *
 * PostgreSQL's own work per create is not in the server's CPU: postgresBackendsCpu reads the CPU
 * of the backends connected to the benchmark's database (the server's pool) from /proc.
 */
import { writeFileSync } from "node:fs";
import { psql } from "./crm-load.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { latencyMs } from "./wrk.ts";

export interface SliceRun {
  url: string;
  path: string;
  bodies: unknown[];
  tokens: string[];
  /** Answers to wait for, split between the threads. */
  creates: number;
  threads: number;
  connections: number;
  timeoutSeconds: number;
  scriptPath: string;
}

export interface SliceResult {
  /** From starting wrk to the last thread's quota: the time the slice took. */
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

/** wrk's duration: a bound that the quota always reaches first, unless the server has stalled. */
const wrkBoundSeconds = 3600;
const quotaMark = "svc-bench: quota reached";

const luaString = (s: string) => JSON.stringify(s);

function sliceScript(r: SliceRun): string {
  const quotas = Array.from({ length: r.threads }, (_, i) => Math.floor(r.creates / r.threads) + (i < r.creates % r.threads ? 1 : 0));
  return `
local tokens = { ${r.tokens.map((t) => luaString(`Bearer ${t}`)).join(", ")} }
local bodies = { ${r.bodies.map((b) => luaString(JSON.stringify(b))).join(",\n")} }
local quotas = { ${quotas.join(", ")} }
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("quota", quotas[threads])
  -- Threads start at different places in the rotation, so they do not send the same records.
  thread:set("offset", (threads - 1) * 7919)
end

local requests = nil
local n = 0
local answered = 0
request = function()
  -- Formatted here, not at load: wrk.format takes the Host header from wrk.init.
  if requests == nil then
    requests = {}
    for i = 1, #bodies do
      local headers = { ["Authorization"] = tokens[(i % #tokens) + 1], ["Content-Type"] = "application/json" }
      requests[i] = wrk.format("POST", ${luaString(r.path)}, headers, bodies[i])
    end
    n = wrk.thread:get("offset")
  end
  n = n + 1
  return requests[(n % #requests) + 1]
end

response = function(status, headers, body)
  answered = answered + 1
  if answered == wrk.thread:get("quota") then
    io.write(${luaString(`${quotaMark}\n`)})
    io.flush()
    wrk.thread:stop()
  end
end
`;
}

/** One slice: `creates` POSTs, then wrk's percentiles and the wall time. */
export async function createSlice(r: SliceRun): Promise<SliceResult> {
  if (r.creates < r.threads) throw new Error(`a slice of ${r.creates} creates is smaller than wrk's ${r.threads} threads`);
  writeFileSync(r.scriptPath, sliceScript(r));
  const argv = ["wrk", "--latency", "-t", String(r.threads), "-c", String(r.connections), "-d", `${wrkBoundSeconds}s`];
  argv.push("--timeout", `${r.timeoutSeconds}s`, "-s", r.scriptPath, r.url);
  const start = performance.now();
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const errText = new Response(proc.stderr).text();
  let out = "";
  let seconds = 0;
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) {
    out += decoder.decode(chunk, { stream: true });
    if (seconds === 0 && out.split(quotaMark).length - 1 === r.threads) {
      seconds = (performance.now() - start) / 1000;
      proc.kill("SIGINT");
    }
  }
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${await errText}\n${out}`);
  if (seconds === 0) throw new Error(`wrk ended before its threads reached their quotas:\n${out}`);
  if (/Non-2xx or 3xx responses/.test(out) || /Socket errors/.test(out)) throw new Error(`wrk saw errors:\n${out}`);
  return { seconds, p50Ms: latencyMs(out, "50"), p99Ms: latencyMs(out, "99") };
}

/** CPU seconds so far of each PostgreSQL backend connected to `url`'s database, by pid. */
export async function postgresBackendsCpu(url: string): Promise<Map<number, number>> {
  const pids = await psql(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const cpu = new Map<number, number>();
  for (const pid of pids
    .split("\n")
    .filter((l) => l !== "")
    .map(Number)) {
    try {
      cpu.set(pid, cpuSeconds(pid));
    } catch {
      // Gone between the query and the read: its CPU is lost either way.
    }
  }
  return cpu;
}

/** CPU the backends used between two readings; one that connected in between counts from zero. */
export function backendsCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}
