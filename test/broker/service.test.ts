// `svc broker` as a user starts it: its flags at their limits and one past, the default data dir
// under the working directory, port 0 printing the real address, and --flush-every-records
// accepted above 1 with a warning that every produce is still synced.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchRecordsMax } from "../../src/core/limits.ts";
import { freshDataDir, highWatermarks, startBroker } from "./support/broker.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");

/** Runs `svc broker` with flags that must be refused before it listens. */
async function refusedFlags(flags: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([process.execPath, cliPath, "broker", "--data-dir", freshDataDir(), ...flags], { stdout: "ignore", stderr: "pipe" });
  const stderr = await new Response(proc.stderr).text();
  return { code: await proc.exited, stderr };
}

describe("svc broker flags", () => {
  test("--bind needs host:port; --max-record-bytes and --max-fetch-* cannot pass the spec's limits", async () => {
    for (const [flags, message] of [
      [["--bind", "8080"], /--bind: expected host:port/],
      [["--bind", "127.0.0.1:65536"], /--bind: expected host:port/],
      [["--max-record-bytes", "8MiB", "--max-record-bytes", String(8 * 1024 * 1024 + 1)], /--max-record-bytes: expected a size from 1B to 8MiB/],
      [["--max-request-body-bytes", String(10 * 1024 * 1024 + 1)], /--max-request-body-bytes: expected a size/],
      [["--max-fetch-records", String(fetchRecordsMax + 1)], /--max-fetch-records: expected an integer from 1 to 10000/],
      [["--max-fetch-bytes", String(8 * 1024 * 1024 + 1)], /--max-fetch-bytes: expected a size/],
      [["--flush-every-records", "0"], /--flush-every-records: expected an integer from 1/],
      [["--coord-member-timeout", "999ms"], /--coord-member-timeout: expected a duration from 1s/],
      [["--coord-member-timeout", "31m"], /--coord-member-timeout: expected a duration/],
      [["--auth", "optional"], /--auth/],
    ] as const) {
      const { code, stderr } = await refusedFlags([...flags]);
      expect(code, flags.join(" ")).toBe(2);
      expect(stderr, flags.join(" ")).toMatch(message);
    }
  });

  test("the flags at their limits start it; with --flush-every-records 5 answered records survive kill -9", async () => {
    const flags = [
      "--max-record-bytes",
      "8MiB",
      "--max-request-body-bytes",
      "10MiB",
      "--max-fetch-records",
      String(fetchRecordsMax),
      "--max-fetch-bytes",
      "8MiB",
      "--flush-every-records",
      "5",
      "--coord-member-timeout",
      "1s",
    ];
    const broker = await startBroker(undefined, flags);
    expect(broker.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(broker.url).not.toMatch(/:0$/);
    expect((await broker.call("GET", "/healthz")).status).toBe(200);
    expect((await broker.call("POST", "/topics", { name: "t", partitions: 1 })).status).toBe(201);
    // Seven records in three produces: the third passes five and syncs, the rest are only written.
    for (const n of [3, 3, 1]) {
      const records = Array.from({ length: n }, (_, i) => ({ value: `v${i}` }));
      expect((await broker.call("POST", "/topics/t/produce", { records })).status).toBe(200);
    }
    // A process crash keeps what was written (the page cache survives it; a machine crash might not).
    await broker.kill();
    const again = await startBroker(broker.dataDir, flags);
    try {
      expect(await highWatermarks(again, "t")).toEqual([7]);
    } finally {
      await again.stop();
    }
  });

  test("without --data-dir, data goes to data/broker under the working directory", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "svc-broker-cwd-"));
    const proc = Bun.spawn([process.execPath, cliPath, "broker", "--bind", "127.0.0.1:0", "--log-level", "warn"], { cwd, stdout: "ignore", stderr: "pipe" });
    const reader = proc.stderr.getReader();
    let text = "";
    while (!/HTTP on (\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`svc broker exited: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const url = `http://${/HTTP on (\S+)/.exec(text)![1]}`;
    await fetch(`${url}/topics`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "here", partitions: 1 }) });
    proc.kill("SIGTERM");
    await proc.exited;
    expect(existsSync(join(cwd, "data/broker/topics/here/topic.json"))).toBe(true);
    rmSync(cwd, { recursive: true, force: true });
  });
});
