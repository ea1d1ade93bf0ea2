// A fault inside the broker (spec: Errors 2): a real one is injected — a file put where a
// partition's directory must be made — so the produce that hits it fails deep in the log layer.
// The client gets 500 `internal error (id <id>)` and nothing of the fault; the broker's log has
// the detail under that id; and the broker keeps serving every other request.
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBroker } from "./support/broker.ts";

test("a failing handler is a 500 with an id, the detail only in the log, and the broker keeps serving", async () => {
  const broker = await startBroker();
  try {
    expect((await broker.call("POST", "/topics", { name: "faulty", partitions: 2 })).status).toBe(201);
    expect((await broker.call("POST", "/topics", { name: "fine", partitions: 1 })).status).toBe(201);
    // Partition 1 of "faulty" was never written, so its directory is made on its first write: a file is in the way.
    writeFileSync(join(broker.dataDir, "topics", "faulty", "1"), "in the way\n");
    const response = await fetch(`${broker.url}/topics/faulty/produce`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ records: [{ value: "v", partition: 1 }] }),
    });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: string };
    const id = /^internal error \(id ([^)]+)\)$/.exec(body.error)?.[1];
    expect(id).toBeDefined();
    expect(Object.keys(body)).toEqual(["error"]);
    expect(JSON.stringify(body)).not.toContain(broker.dataDir);
    expect(response.headers.get("x-request-id")).toBe(id!);
    // The log has the detail, under the same id.
    await Bun.sleep(50);
    const logged = broker
      .output()
      .split("\n")
      .find((line) => line.includes(id!));
    expect(logged).toBeDefined();
    expect(logged).toContain("faulty");
    // Everything else is served: the other partition, the other topic, health.
    expect((await broker.call("POST", "/topics/faulty/produce", { records: [{ value: "v", partition: 0 }] })).status).toBe(200);
    expect((await broker.call("POST", "/topics/fine/produce", { records: [{ value: "v" }] })).status).toBe(200);
    expect((await broker.call("GET", "/healthz")).body).toEqual({ status: "ok", topics: 2 });
  } finally {
    await broker.stop();
  }
});
