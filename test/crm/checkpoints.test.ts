// A serving SQLite store copies its write-ahead log into the database file on a thread of its
// own (store/checkpointer.ts), not inside requests' commits. Observable from outside: fewer
// writes than SQLite's own checkpoint waits for (1,000 log pages) reach the database file itself
// (waited for with a bound for a loaded machine), are still there when the server is then killed,
// and a restart finds every acknowledged write.
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { waitUntil } from "../support/wait.ts";
import { sqliteBackend, startCrm, type World, worldForSuite } from "./support/crm.ts";

describe("SQLite checkpoints apart from requests", () => {
  let w: World;
  worldForSuite(sqliteBackend(), (made) => {
    w = made;
  });

  test("writes reach the database file itself, with no more writes to make SQLite checkpoint, and all survive kill -9", async () => {
    const made: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: `Checkpointed${i}`, company: "Acme" });
      expect(r.status).toBe(201);
      made.push(r.body.id);
    }
    const path = w.crm.db.slice("sqlite:".length);
    // The database file alone, without its log: what checkpoints have copied into it. A copy taken
    // while a checkpoint writes may not open; that reads as nothing copied yet.
    const inFile = (): number[] => {
      const dir = mkdtempSync(join(tmpdir(), "svc-crm-file-"));
      try {
        copyFileSync(path, join(dir, "alone.db"));
        const alone = new Database(join(dir, "alone.db"), { readonly: true });
        try {
          return (alone.query("SELECT id FROM leads WHERE last_name LIKE 'Checkpointed%' ORDER BY id").all() as { id: number }[]).map((r) => r.id);
        } finally {
          alone.close();
        }
      } catch {
        return [];
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    await waitUntil(() => (inFile().length === made.length ? true : undefined), "the creates in the database file itself");
    await w.crm.crash();
    expect(inFile()).toEqual(made);
    const again = await startCrm(w.crm.db);
    try {
      const found = (await again.call(w.alice, "GET", "/api/v1/leads?q=checkpointed&per=100")).body;
      expect(found.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).toEqual(made);
    } finally {
      await again.stop();
    }
  }, 30_000);
});
