// Liveness and readiness while a data dir recovers (spec: Health; /readyz "503 before"): the
// port opens first, /healthz answers at once, /readyz answers 503 and every other request is
// refused with 503 until every partition is recovered, then the broker is ready. In process the
// listener is opened before recovery as svc broker opens it, and asked while recovery has not
// run (no timing involved); against a real process, whatever is seen during a large recovery
// follows the same rules, and the broker ends ready with every record.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import { Broker } from "../../src/broker/broker.ts";
import { startBrokerHttp } from "../../src/broker/http/server.ts";
import { freePort } from "../support/spawn.ts";
import { freshDataDir, startBroker } from "./support/broker.ts";

test("before recovery: alive, not ready, every other request 503; after it, ready and serving", async () => {
  const dataDir = freshDataDir();
  const first = await startBroker(dataDir);
  expect((await first.call("POST", "/topics", { name: "t", partitions: 2 })).status).toBe(201);
  expect((await first.call("POST", "/topics/t/produce", { records: [{ value: "v", partition: 1 }] })).status).toBe(200);
  await first.stop();
  const log = createLogger({ level: "silent" });
  const broker = new Broker({
    dataDir,
    flushEveryRecords: 1,
    recordBytesMax: 1 << 20,
    fetchRecordsMax: 1000,
    fetchBytesMax: 1 << 20,
    clock: systemClock,
    authRequired: false,
    memberTimeoutMs: 45_000,
  });
  const http = startBrokerHttp(broker, { hostname: "127.0.0.1", port: 0, bodyBytesMax: 1 << 20, corsOrigins: [], tls: null, log });
  const call = (method: string, path: string, body?: unknown) =>
    fetch(new URL(path, http.url), { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  try {
    expect((await call("GET", "/healthz")).status).toBe(200);
    expect((await call("GET", "/readyz")).status).toBe(503);
    const refused = await call("POST", "/topics/t/produce", { records: [{ value: "x" }] });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: string }).error).toContain("not ready");
    expect((await call("GET", "/topics")).status).toBe(503);
    await broker.open(log);
    expect((await call("GET", "/readyz")).status).toBe(200);
    const read = (await (await call("GET", "/topics/t/consume?partition=1&offset=0")).json()) as { records: { value: string }[] };
    expect(read.records.map((r) => r.value)).toEqual(["v"]);
    expect((await call("POST", "/topics/t/produce", { records: [{ value: "x", partition: 0 }] })).status).toBe(200);
  } finally {
    await http.stop();
    await broker.close();
  }
});

const cliPath = join(import.meta.dir, "../../src/cli.ts");
/** Written partitions enough that recovery usually takes long enough to be seen from outside. */
const partitions = 3000;

test("a real recovery: whatever is seen during it follows the rules, and it ends ready with every record", async () => {
  const dataDir = freshDataDir();
  const first = await startBroker(dataDir);
  expect((await first.call("POST", "/topics", { name: "wide", partitions })).status).toBe(201);
  const records = Array.from({ length: partitions }, (_, p) => ({ value: "v", partition: p }));
  expect((await first.call("POST", "/topics/wide/produce", { records })).status).toBe(200);
  await first.stop();

  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = Bun.spawn([process.execPath, cliPath, "broker", "--bind", `127.0.0.1:${port}`, "--data-dir", dataDir, "--log-level", "warn"], {
    stdout: "ignore",
    stderr: "ignore",
  });
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
      const produce = await fetch(`${url}/topics/wide/produce`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"records":[{"value":"x"}]}',
      });
      if (produce.status === 503) {
        seen.refused = true;
        expect(((await produce.json()) as { error: string }).error).toContain("not ready");
      } else {
        expect(produce.status).toBe(200);
        accepted++;
      }
    }
    // How much of the recovery a probe catches depends on the machine; what it catches must
    // be alive and refusing, and it must end ready.
    expect(seen.ready).toBe(true);
    if (seen.notReady) expect([seen.live, seen.refused || accepted > 0]).toEqual([true, true]);
    // Ready: everything recovered and served.
    const topic = (await (await fetch(`${url}/topics/wide`)).json()) as { partition_details: { high_watermark: number }[] };
    expect(topic.partition_details.every((p) => p.high_watermark >= 1)).toBe(true);
    expect(topic.partition_details.reduce((sum, p) => sum + p.high_watermark, 0)).toBe(partitions + accepted);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 120_000);
