// A SQLite server indexes new records for search in batches (store/search-backlog.ts), not in
// each create's transaction. Seen from outside: a record is found by a search as soon as its
// create is answered; records whose batch never ran (the server killed at once) are found after
// a restart all the same, and the restarted server indexes them without being asked; a batch
// that cannot be written is logged once per run of failures.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { waitUntil } from "../support/wait.ts";
import { sqliteBackend, startCrm, type World, worldForSuite } from "./support/crm.ts";

/** What the search index holds, read from the database file beside the server. */
function indexed(path: string, term: string): { upto: number; ids: number[] } {
  const db = new Database(path, { readonly: true });
  try {
    const { upto } = db.query("SELECT upto FROM search_indexed WHERE object = 'leads'").get() as { upto: number };
    const rows = db.query("SELECT rowid FROM leads_fts WHERE leads_fts MATCH ? ORDER BY rowid").all(`"${term}"`) as { rowid: number }[];
    return { upto, ids: rows.map((r) => r.rowid) };
  } finally {
    db.close();
  }
}

describe("SQLite search index written in batches", () => {
  let w: World;
  worldForSuite(sqliteBackend(), (made) => {
    w = made;
  });

  test("a create is found at once; creates whose batch never ran are found after kill -9 and indexed by the next server", async () => {
    const made: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: `Batchly${i}`, company: "Acme" });
      expect(r.status).toBe(201);
      made.push(r.body.id);
      // Found by the next request, whether or not a batch has run since.
      const found = (await w.crm.call(w.alice, "GET", `/api/v1/leads?q=batchly${i}&per=100`)).body;
      expect(found.data.map((l: { id: number }) => l.id)).toContain(r.body.id);
    }
    await w.crm.crash();
    const again = await startCrm(w.crm.db);
    try {
      const found = (await again.call(w.alice, "GET", "/api/v1/leads?q=batchly&per=100")).body;
      expect(found.data.map((l: { id: number }) => l.id).sort((a: number, b: number) => a - b)).toEqual(made);
      expect(found.total).toBe(made.length);
      // The restarted server works off what the killed one left, unasked.
      const path = w.crm.db.slice("sqlite:".length);
      const last = made.at(-1)!;
      await waitUntil(() => (indexed(path, "batchly").upto >= last ? true : undefined), "the backlog indexed");
      expect(indexed(path, "batchly").ids).toEqual(made);
      // And searching is the same with nothing left in the backlog.
      const after = (await again.call(w.alice, "GET", "/api/v1/leads?q=batchly&per=100")).body;
      expect(after.data).toEqual(found.data);
    } finally {
      await again.stop();
    }
  }, 30_000);

  test("a batch that cannot be written is logged once, not at every retry, and the backlog is indexed once it can be", async () => {
    const server = await startCrm(w.crm.db);
    const path = w.crm.db.slice("sqlite:".length);
    const alter = (sql: string) => {
      const db = new Database(path);
      db.exec(sql);
      db.close();
    };
    try {
      // A batch ends by moving the index's mark: refused, every batch fails (as on a damaged file).
      alter("CREATE TRIGGER refuse_batches BEFORE UPDATE ON search_indexed BEGIN SELECT RAISE(ABORT, 'refused'); END");
      const r = await server.call(w.alice, "POST", "/api/v1/leads", { last_name: "Unindexed", company: "Acme" });
      expect(r.status).toBe(201);
      const warning = "the search index could not take new records";
      await waitUntil(() => (server.output().includes(warning) ? true : undefined), "the failed batch logged");
      // Retried every 50 ms: several more fail, and none of them is logged again.
      await Bun.sleep(300);
      expect(server.output().split(warning).length - 1).toBe(1);
      expect((await server.call(w.alice, "GET", "/api/v1/leads?q=unindexed")).body.total).toBe(1);
      alter("DROP TRIGGER refuse_batches");
      await waitUntil(() => (indexed(path, "unindexed").ids.includes(r.body.id) ? true : undefined), "the backlog indexed");
    } finally {
      await server.stop();
    }
  }, 30_000);
});
