// Crash safety: a producer process is killed with SIGKILL at a random moment while it appends;
// after reopening, every record it acknowledged reads back at the offset it was acknowledged with
// and with its content, and no record appears twice. Repeated on one directory, so each run also
// recovers what the previous kill left behind.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Partition } from "../../../src/broker/log/partition.ts";
import { freshDir } from "./support.ts";

const writer = join(import.meta.dir, "fixtures/crash-writer.ts");
const runs = 5;

/** Starts the writer, kills it `killAfterMs` after it is ready, and returns the acks it printed. */
async function killMidway(dir: string, run: number, killAfterMs: number): Promise<Map<number, string>> {
  const proc = Bun.spawn([process.execPath, writer, dir, String(run)], { stdout: "pipe", stderr: "inherit" });
  const decoder = new TextDecoder();
  let output = "";
  let killed = false;
  for await (const chunk of proc.stdout) {
    output += decoder.decode(chunk, { stream: true });
    if (!killed && output.includes("ready")) {
      killed = true;
      setTimeout(() => proc.kill("SIGKILL"), killAfterMs);
    }
  }
  await proc.exited;
  expect(proc.signalCode).toBe("SIGKILL");
  const acks = new Map<number, string>();
  // Only whole lines count: a line cut by the kill was never fully printed.
  for (const line of output.split("\n").slice(0, -1)) {
    const [kind, offset, value] = line.split(" ");
    if (kind === "ack") acks.set(Number(offset), value!);
  }
  return acks;
}

function readEverything(partition: Partition): { offset: number; value: string }[] {
  const out: { offset: number; value: string }[] = [];
  const decoder = new TextDecoder();
  for (let offset = partition.logStartOffset; offset < partition.highWatermark; ) {
    const got = partition.read(offset, 10_000, 1 << 22);
    for (const r of got.records) out.push({ offset: r.offset, value: decoder.decode(r.value).replace(/~+$/, "") });
    offset = got.nextOffset;
  }
  return out;
}

describe("crash safety", () => {
  test(`kill -9 mid-produce, ${runs} times: every acknowledged record survives with its offset, none twice`, async () => {
    const dir = freshDir();
    const acknowledged = new Map<number, string>();
    for (let run = 0; run < runs; run++) {
      const acks = await killMidway(dir, run, 100 + Math.floor(Math.random() * 400));
      for (const [offset, value] of acks) {
        expect(acknowledged.has(offset)).toBe(false); // an acknowledged offset is never handed out again
        acknowledged.set(offset, value);
      }
      const partition = Partition.open(dir, { segmentBytes: 16 * 1024, indexIntervalBytes: 512 });
      const records = readEverything(partition);
      await partition.close();
      const byOffset = new Map(records.map((r) => [r.offset, r.value]));
      for (const [offset, value] of acknowledged) expect(byOffset.get(offset)).toBe(value);
      expect(new Set(records.map((r) => r.value)).size).toBe(records.length);
      expect(records.map((r) => r.offset)).toEqual(records.map((_, i) => i));
    }
    expect(acknowledged.size).toBeGreaterThan(0);
  }, 20_000);
});
