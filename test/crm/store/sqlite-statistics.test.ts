// The SQLite store's planner statistics: the store's own tables are analyzed when it opens, and
// FTS5's shadow tables never are (their statistics made a create's commit cost grow with the
// search index: 0.2 ms per create on an empty table, 3.5 ms by 100k rows, docs/crm.md). Rows an
// earlier version left for them are removed before the long-lived connections load any. What a
// connection holds in memory is not visible from here: `./svc bench crm` measures creates through
// the API as the table grows, which is where a regression of that kind shows.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../../src/crm/store/open.ts";
import { indexBacklog } from "../../../src/crm/store/search-backlog.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-stats-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const leadsToLoad = 500;

function statisticsOf(path: string): { tbl: string; idx: string | null }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ tbl: string; idx: string | null }, []>("SELECT tbl, idx FROM sqlite_stat1 ORDER BY tbl, idx").all();
  } finally {
    db.close();
  }
}

describe("SQLite planner statistics", () => {
  test("opening analyzes the object tables and their indexes, and drops any statistics of the search index's shadow tables", async () => {
    const path = join(root, "crm.db");
    const store = await openStore(`sqlite:${path}`);
    const now = new Date().toISOString();
    await store.write(async (tx) => {
      const owner = await tx.get<{ id: number }>("INSERT INTO users (username, is_admin, created_at) VALUES ('owner', 0, $1) RETURNING id", [now]);
      for (let i = 0; i < leadsToLoad; i++) {
        await tx.run(
          "INSERT INTO leads (owner_id, created_at, updated_at, search_text, last_name, company, status) VALUES ($1, $2, $2, $3, $4, 'Acme', 'Open - Not Contacted')",
          [owner!.id, now, `smith${i} acme`, `Smith${i}`],
        );
      }
    });
    await store.close();
    // What a version that analyzed every table (PRAGMA optimize) left behind.
    const old = new Database(path);
    old.exec("ANALYZE");
    old.close();
    expect(statisticsOf(path).filter((s) => s.tbl.includes("_fts_")).length).toBeGreaterThan(0);

    const reopened = await openStore(`sqlite:${path}`);
    // The leads wait in the search backlog (store/search-backlog.ts) until a batch indexes them.
    while (await reopened.write((tx) => indexBacklog(tx, "leads")));
    await reopened.close();
    const stats = statisticsOf(path);
    expect(stats.filter((s) => s.tbl.includes("_fts_"))).toEqual([]);
    // The leads table and its newest-first index have statistics: the list's plan depends on them.
    expect(stats).toContainEqual({ tbl: "leads", idx: "leads_created" });
    expect(stats).toContainEqual({ tbl: "leads", idx: "leads_owner" });
    // And the search index still answers.
    const check = new Database(path, { readonly: true });
    expect(check.query("SELECT count(*) AS n FROM leads_fts WHERE leads_fts MATCH 'smith12'").get()).toEqual({ n: 11 });
    check.close();
  });
});
