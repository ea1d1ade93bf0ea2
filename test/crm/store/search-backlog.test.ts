// SQLite's search index is written in batches (store/search-backlog.ts): records above an
// object's `upto` wait in the backlog, and a search reads the index and the backlog. Checked
// against a model through any sequence of creates, edits, deletes and batches of any size: a
// search finds exactly the records holding its terms, wherever they are; the index holds exactly
// the records at or below `upto`, with their current text, and nothing above it.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { matchingIds } from "../../../src/crm/records/search.ts";
import { type Db, SqlParams } from "../../../src/crm/store/db.ts";
import { openStore } from "../../../src/crm/store/open.ts";
import { indexBacklog } from "../../../src/crm/store/search-backlog.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-backlog-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Words the texts are made of: overlapping, so that terms match several records and parts of words. */
const words = ["smith", "smithers", "goldsmith", "ann", "anna", "joann", "ng", "jones"];
/** Terms searched: whole and partial words, under three characters (matched on the row), several at once. */
const terms = ["smith", "smi", "ith", "ann", "anna", "ng", "on", "jones", "smith ann", "ers gold", "zzz"];

type Op =
  | { kind: "create"; text: string }
  | { kind: "edit"; pick: number; text: string }
  | { kind: "delete"; pick: number }
  | { kind: "index"; rows: number }
  | { kind: "search"; q: string };

const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((w) => w.join(" "));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => ({ kind: "create" as const, text: t })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("edit" as const), pick: fc.nat(), text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }).map((rows) => ({ kind: "index" as const, rows })) },
  { weight: 3, arbitrary: fc.constantFrom(...terms).map((q) => ({ kind: "search" as const, q })) },
);

/** The ids of leads a search for `q` finds, as the store asks (index and backlog). */
async function search(db: Db, q: string): Promise<number[]> {
  const p = new SqlParams();
  const sql = matchingIds("sqlite", "leads", q.split(" "), [], p)!;
  return (await db.all<{ match_id: number }>(`${sql} ORDER BY match_id`, p.values)).map((r) => Number(r.match_id));
}

const modelSearch = (texts: Map<number, string>, q: string) =>
  [...texts]
    .filter(([, t]) => q.split(" ").every((term) => t.includes(term)))
    .map(([id]) => id)
    .sort((a, b) => a - b);

describe("SQLite's search backlog", () => {
  test("searches find exactly the matching records, indexed or not; the index holds exactly those at or below upto, as they are now", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const db = await openStore(`sqlite:${join(root, `model-${run++}.db`)}`);
        try {
          const now = new Date().toISOString();
          const owner = (await db.write((tx) =>
            tx.get<{ id: number }>("INSERT INTO users (username, is_admin, created_at) VALUES ('o', 0, $1) RETURNING id", [now]),
          ))!.id;
          const texts = new Map<number, string>();
          for (const o of ops) {
            const ids = [...texts.keys()];
            if (o.kind === "create") {
              const made = await db.write((tx) =>
                tx.get<{ id: number }>("INSERT INTO leads (owner_id, created_at, updated_at, search_text) VALUES ($1, $2, $2, $3) RETURNING id", [
                  owner,
                  now,
                  o.text,
                ]),
              );
              texts.set(made!.id, o.text);
            } else if (o.kind === "edit" && ids.length > 0) {
              const id = ids[o.pick % ids.length]!;
              await db.write((tx) => tx.run("UPDATE leads SET search_text = $1 WHERE id = $2", [o.text, id]));
              texts.set(id, o.text);
            } else if (o.kind === "delete" && ids.length > 0) {
              const id = ids[o.pick % ids.length]!;
              await db.write((tx) => tx.run("DELETE FROM leads WHERE id = $1", [id]));
              texts.delete(id);
            } else if (o.kind === "index") {
              await db.write((tx) => indexBacklog(tx, "leads", o.rows));
            } else if (o.kind === "search") {
              expect(await search(db, o.q)).toEqual(modelSearch(texts, o.q));
            }
          }
          const upto = Number((await db.get<{ upto: number }>("SELECT upto FROM search_indexed WHERE object = 'leads'"))!.upto);
          // The index itself, asked for each word it can look up (three characters or more).
          for (const word of words.filter((w) => w.length >= 3)) {
            const indexed = (await db.all<{ rowid: number }>("SELECT rowid FROM leads_fts WHERE leads_fts MATCH $1 ORDER BY rowid", [`"${word}"`])).map((r) =>
              Number(r.rowid),
            );
            expect(indexed).toEqual(modelSearch(texts, word).filter((id) => id <= upto));
          }
          // Batches until none is left index everything.
          while (await db.write((tx) => indexBacklog(tx, "leads", 4)));
          for (const q of terms) expect(await search(db, q)).toEqual(modelSearch(texts, q));
          expect(
            Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM leads WHERE id > (SELECT upto FROM search_indexed WHERE object = 'leads')"))!.n),
          ).toBe(0);
        } finally {
          await db.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  test("a batch takes at most its size, oldest first, and says whether a backlog is left", async () => {
    const db = await openStore(`sqlite:${join(root, "batches.db")}`);
    try {
      const now = new Date().toISOString();
      await db.write(async (tx) => {
        const owner = (await tx.get<{ id: number }>("INSERT INTO users (username, is_admin, created_at) VALUES ('o', 0, $1) RETURNING id", [now]))!.id;
        for (let i = 0; i < 5; i++) await tx.run("INSERT INTO leads (owner_id, created_at, updated_at, search_text) VALUES ($1, $2, $2, 'x')", [owner, now]);
      });
      const upto = async () => Number((await db.get<{ upto: number }>("SELECT upto FROM search_indexed WHERE object = 'leads'"))!.upto);
      const first = Number((await db.get<{ id: number }>("SELECT min(id) AS id FROM leads"))!.id);
      expect(await upto()).toBe(first - 1);
      expect(await db.write((tx) => indexBacklog(tx, "leads", 2))).toBe(true);
      expect(await upto()).toBe(first + 1);
      expect(await db.write((tx) => indexBacklog(tx, "leads", 3))).toBe(false);
      expect(await upto()).toBe(first + 4);
      expect(await db.write((tx) => indexBacklog(tx, "leads", 3))).toBe(false);
      expect(await upto()).toBe(first + 4);
      // The other objects' backlogs are their own.
      expect(await db.write((tx) => indexBacklog(tx, "contacts"))).toBe(false);
    } finally {
      await db.close();
    }
  });
});
