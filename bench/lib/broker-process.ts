/**
 * A real `svc broker` as the broker benchmarks drive it: started on a free port over a data dir
 * of the benchmark's, and called with fetch, JSON in and the answer's text out (a non-2xx
 * answer fails the benchmark: a table must never show the rate of errors).
 */
import type { Subprocess } from "bun";
import { join } from "node:path";
import { brokerAddress, spawnServer } from "../../test/support/spawn.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");

export interface BenchBroker {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  /** Sent with every call (an API key), unless a call gives its own. */
  headers: Record<string, string>;
  /** Everything the broker printed so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function startBenchBroker(dataDir: string, flags: string[] = []): Promise<BenchBroker> {
  const argv = [process.execPath, cliPath, "broker", "--bind", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "warn", ...flags];
  const server = await spawnServer("svc broker", argv, brokerAddress);
  return { url: `http://${server.where}`, proc: server.proc, dataDir, headers: {}, output: server.output, stop: server.stop };
}

/** Calls the broker; answers the body's text (parse it where JSON is wanted). */
export async function callBroker(broker: BenchBroker, method: string, path: string, body?: unknown, headers = broker.headers): Promise<string> {
  const init: RequestInit = { method, headers: body === undefined ? headers : { ...headers, "content-type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${broker.url}${path}`, init);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
  return text;
}

/**
 * A wrk script that POSTs the same produce of `batch` keyless records of `valueBytes` to `topic`
 * (wrk builds the request once and resends it), with `headers` (an API key) on each.
 */
export function wrkProduceScript(topic: string, valueBytes: number, batch: number, headers: Record<string, string> = {}): string {
  return `
wrk.method = "POST"
wrk.path = "/topics/${topic}/produce"
wrk.headers["Content-Type"] = "application/json"
${wrkHeaders(headers)}
local record = '{"value":"' .. string.rep("x", ${valueBytes}) .. '"}'
local records = {}
for i = 1, ${batch} do records[i] = record end
wrk.body = '{"records":[' .. table.concat(records, ",") .. ']}'
`;
}

/** Lua lines that set `headers` on every request of a wrk script. */
export function wrkHeaders(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `wrk.headers["${name}"] = "${value}"`)
    .join("\n");
}
