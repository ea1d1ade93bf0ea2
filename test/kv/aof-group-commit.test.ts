// appendfsync always's group commit (AppendLog.scheduleSync): many writers share one fdatasync,
// a sync after a busy one waits for as many writers as it carried, and a lone writer never
// waits. Counted in syncs on a real file, not timed.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppendLog } from "../../src/kv/aof/append-log.ts";

/** Long enough that only the writers' count, never the clock, can start a gathered sync. */
const gatherForeverMs = 60_000;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const logs: AppendLog[] = [];
const dirs: string[] = [];
function newLog(gatherMaxMs: number): AppendLog {
  const dir = mkdtempSync(join(tmpdir(), "svc-aof-group-"));
  dirs.push(dir);
  const log = new AppendLog(join(dir, "appendonly.aof"), "always", 0, gatherMaxMs);
  logs.push(log);
  return log;
}

afterEach(async () => {
  await Promise.all(logs.splice(0).map((log) => log.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const set = (log: AppendLog, key: string) => log.append(0, [["SET", key, "v"]]);

describe("appendfsync always: group commit", () => {
  test("writes made in one turn of the event loop share one sync", async () => {
    const log = newLog(gatherForeverMs);
    for (const key of ["a", "b", "c"]) set(log, key);
    await log.covered();
    expect(log.syncCount).toBe(1);
    expect(log.durableSeq).toBe(3);
  });

  test("after a sync that carried three writers, the next waits for three, over several turns", async () => {
    const log = newLog(gatherForeverMs);
    for (const key of ["a", "b", "c"]) set(log, key);
    await log.covered();
    set(log, "d");
    const covered = log.covered();
    await nextTurn();
    set(log, "e");
    await nextTurn();
    await nextTurn();
    // Two of three are back: still waiting, nothing synced since.
    expect(log.syncCount).toBe(1);
    expect(log.durableSeq).toBe(3);
    set(log, "f");
    await covered;
    expect(log.syncCount).toBe(2);
    expect(log.durableSeq).toBe(6);
    const file = readFileSync(log.path, "latin1");
    for (const key of ["a", "b", "c", "d", "e", "f"]) expect(file).toContain(`$1\r\n${key}\r\n$1\r\nv\r\n`);
  });

  test("writers that do not come back are synced once the gathering time runs out", async () => {
    const log = newLog(20);
    for (const key of ["a", "b", "c"]) set(log, key);
    await log.covered();
    set(log, "d");
    await log.covered();
    expect(log.syncCount).toBe(2);
    expect(log.durableSeq).toBe(4);
  });

  test("a lone writer never waits to be gathered: each write is synced by itself", async () => {
    const log = newLog(gatherForeverMs);
    for (let i = 0; i < 5; i++) {
      set(log, `k${i}`);
      await log.covered();
      expect(log.syncCount).toBe(i + 1);
    }
  });
});
