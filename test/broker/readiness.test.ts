// Liveness and readiness while a data dir recovers (spec: Health; /readyz "503 before"): the
// port opens first, /healthz answers at once, /readyz answers 503 and every other request is
// refused with 503 until every partition is recovered, then the broker is ready.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { freePort } from "../support/spawn.ts";
import { freshDataDir, startBroker } from "./support/broker.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");
/** Enough written partitions that recovering them takes long enough to be seen from outside. */
const partitions = 3000;

test("during recovery: alive, not ready, requests refused with 503; then ready", async () => {
  const dataDir = freshDataDir();
  const first = await startBroker(dataDir);
  expect((await first.call("POST", "/topics", { name: "wide", partitions })).status).toBe(201);
  const records = Array.from({ length: partitions }, (_, p) => ({ value: "v", partition: p }));
  expect((await first.call("POST", "/topics/wide/produce", { records })).status).toBe(200);
  await first.stop();

  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = Bun.spawn([process.execPath, cliPath, "broker", "--bind", `127.0.0.1:${port}`, "--data-dir", dataDir, "--log-level", "warn"], { stdout: "ignore", stderr: "ignore" });
  try {
    const seen = { live: false, notReady: false, refused: false, ready: false };
    // A produce sent as recovery ends may be taken: counted, to check the log after.
    let accepted = 0;
    const deadline = Date.now() + 60_000;
    while (!seen.ready && Date.now() < deadline) {
      const ready = await fetch(`${url}/readyz`).catch(() => null);
      if (ready === null) {
        await Bun.sleep(5);
        continue;
      }
      if (ready.status === 200) {
        seen.ready = true;
        break;
      }
      seen.notReady = true;
      if ((await fetch(`${url}/healthz`)).status === 200) seen.live = true;
      const produce = await fetch(`${url}/topics/wide/produce`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"records":[{"value":"x"}]}' });
      if (produce.status === 503) {
        seen.refused = true;
        expect(((await produce.json()) as { error: string }).error).toContain("not ready");
      } else {
        expect(produce.status).toBe(200);
        accepted++;
      }
    }
    expect(seen).toEqual({ live: true, notReady: true, refused: true, ready: true });
    // Ready: everything recovered and served.
    const topic = (await (await fetch(`${url}/topics/wide`)).json()) as { partition_details: { high_watermark: number }[] };
    expect(topic.partition_details.every((p) => p.high_watermark >= 1)).toBe(true);
    expect(topic.partition_details.reduce((sum, p) => sum + p.high_watermark, 0)).toBe(partitions + accepted);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 120_000);
