// A serving SQLite store runs searches on threads with connections of their own
// (store/search-readers.ts). They must answer exactly as the store's own reader does, see what the
// writer has committed, refuse to write, and hand SQLite's errors back mapped as the store maps its own.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../../src/crm/store/open.ts";
import { SearchReaders } from "../../../src/crm/store/search-readers.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-readers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("SQLite search readers", () => {
  test("answer as the store's reader, see each commit, refuse writes, and hand errors back", async () => {
    const store = await openStore(`sqlite:${join(root, "crm.db")}`, undefined, { serving: true });
    try {
      const readers = store.searchReads!;
      expect(readers).toBeDefined();
      const now = new Date().toISOString();
      const owner = (await store.write((tx) =>
        tx.get<{ id: number }>("INSERT INTO users (username, is_admin, created_at) VALUES ('o', 0, $1) RETURNING id", [now]),
      ))!.id;
      for (let i = 0; i < 50; i++) {
        await store.write((tx) =>
          tx.run("INSERT INTO leads (owner_id, created_at, updated_at, search_text, last_name) VALUES ($1, $2, $2, $3, $3)", [owner, now, `reader${i}`]),
        );
        // A read sent after the write was answered sees it, on whichever thread it lands.
        const [counted, listed] = await Promise.all([
          readers.get<{ n: number }>("SELECT count(*) AS n FROM leads WHERE last_name LIKE $1", ["reader%"]),
          readers.all<{ last_name: string }>("SELECT last_name FROM leads ORDER BY id DESC LIMIT $1", [3]),
        ]);
        expect(counted).toEqual({ n: i + 1 });
        expect(listed).toEqual(await store.all("SELECT last_name FROM leads ORDER BY id DESC LIMIT $1", [3]));
      }
      expect(await readers.get("SELECT id FROM leads WHERE id = $1", [-1])).toBeUndefined();
      // Many at once: each answer is its own statement's.
      const many = await Promise.all(Array.from({ length: 40 }, (_, i) => readers.get<{ v: number }>("SELECT $1 AS v", [i])));
      expect(many.map((r) => r!.v)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      await expect(readers.all("INSERT INTO roles (name, created_at) VALUES ('x', $1) RETURNING id", [now])).rejects.toThrow(/only read/);
      // The statistics reloaded (the store does so hourly): the threads go on answering.
      (readers as SearchReaders).reloadStatistics();
      expect(await readers.get<{ n: number }>("SELECT count(*) AS n FROM leads")).toEqual({ n: 50 });
      await expect(readers.run("DELETE FROM leads")).rejects.toThrow(/only read/);
      // Settled before expect sees it: Bun 1.4.5's expect(…).rejects, awaited on a promise a
      // Worker's message settles, takes no Worker message until a timer fires (search-readers.ts).
      const missing = await readers.all("SELECT * FROM no_such_table").catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(Error);
      expect((missing as Error).message).toMatch(/no such table/);
      expect(Number((await store.get<{ n: number }>("SELECT count(*) AS n FROM roles"))!.n)).toBe(0);
    } finally {
      await store.close();
    }
  });

  test("threads that fail are dropped, and what they were asked is answered by the store's own reader", async () => {
    const store = await openStore(`sqlite:${join(root, "fallback.db")}`);
    // Threads whose database cannot be opened (a directory that does not exist) fail at once.
    const readers = new SearchReaders(
      join(root, "no-such-dir", "crm.db"),
      2,
      (sql, params) => [sql.replace(/\$(\d+)/g, "?$1"), params as never],
      (e) => e,
      store,
    );
    try {
      const asked = await Promise.all(Array.from({ length: 10 }, (_, i) => readers.get<{ v: number }>("SELECT $1 AS v", [i])));
      expect(asked.map((r) => r!.v)).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect(await readers.all("SELECT count(*) AS n FROM leads")).toEqual([{ n: 0 }]);
    } finally {
      await readers.close();
      await store.close();
    }
  });

  test("a store that does not serve (a CLI tool's) has none", async () => {
    const store = await openStore(`sqlite:${join(root, "tool.db")}`);
    try {
      expect(store.searchReads).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
