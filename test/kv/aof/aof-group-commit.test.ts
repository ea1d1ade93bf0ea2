// appendfsync always's group commit (AppendLog.scheduleSync): many writers share one fdatasync,
// a sync after a busy one waits for as many writers as it carried, and a lone writer never
// waits, however many commands it writes at once. Counted in syncs on a real file, not timed.
//
// A writer here is what a connection or a REST request is to the log: it appends, then waits
// with covered() (which registers it as waiting, as a connection holding replies back does).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppendLog } from "../../../src/kv/aof/append-log.ts";

/** Long enough that only the writers' count, never the clock, can start a gathered sync. */
const gatherForeverMs = 60_000;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const logs: AppendLog[] = [];
const dirs: string[] = [];
function newLog(gatherMaxMs: number): AppendLog {
  const dir = mkdtempSync(join(tmpdir(), "svc-aof-group-"));
  dirs.push(dir);
  const log = new AppendLog(join(dir, "appendonly.aof"), "always", 0, { gatherMaxMs });
  logs.push(log);
  return log;
}

afterEach(async () => {
  await Promise.all(logs.splice(0).map((log) => log.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const set = (log: AppendLog, key: string) => log.append(0, [["SET", key, "v"]]);
/** One writer: its commands appended, then the wait for them to be durable. */
function write(log: AppendLog, ...keys: string[]): Promise<void> {
  for (const key of keys) set(log, key);
  return log.covered();
}

describe("appendfsync always: group commit", () => {
  test("writes made in one turn of the event loop share one sync", async () => {
    const log = newLog(gatherForeverMs);
    await Promise.all(["a", "b", "c"].map((key) => write(log, key)));
    expect(log.syncCount).toBe(1);
    expect(log.durableSeq).toBe(3);
  });

  test("after a sync that carried three writers, the next waits for three, over several turns", async () => {
    const log = newLog(gatherForeverMs);
    await Promise.all(["a", "b", "c"].map((key) => write(log, key)));
    const d = write(log, "d");
    await nextTurn();
    const e = write(log, "e");
    await nextTurn();
    await nextTurn();
    // Two of three are back: still waiting, nothing synced since.
    expect(log.syncCount).toBe(1);
    expect(log.durableSeq).toBe(3);
    await Promise.all([d, e, write(log, "f")]);
    expect(log.syncCount).toBe(2);
    expect(log.durableSeq).toBe(6);
    const file = readFileSync(log.path, "latin1");
    for (const key of ["a", "b", "c", "d", "e", "f"]) expect(file).toContain(`$1\r\n${key}\r\n$1\r\nv\r\n`);
  });

  test("writers that do not come back are synced once the gathering time runs out", async () => {
    const log = newLog(20);
    await Promise.all(["a", "b", "c"].map((key) => write(log, key)));
    await write(log, "d");
    expect(log.syncCount).toBe(2);
    expect(log.durableSeq).toBe(4);
  });

  test("a writer counts once however many commands it wrote: its next single write is not held", async () => {
    const log = newLog(gatherForeverMs);
    // One client's EXEC or pipelined batch: three commands, one writer.
    await write(log, "a", "b", "c");
    expect(log.syncCount).toBe(1);
    // Counting commands, this would wait for two more writers that do not exist (forever here).
    await write(log, "d");
    expect(log.syncCount).toBe(2);
    expect(log.durableSeq).toBe(4);
  });

  test("a lone writer never waits to be gathered: each write is synced by itself", async () => {
    const log = newLog(gatherForeverMs);
    for (let i = 0; i < 5; i++) {
      await write(log, `k${i}`);
      expect(log.syncCount).toBe(i + 1);
    }
  });
});
