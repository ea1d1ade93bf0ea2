// A serving SQLite store's write-ahead log stays bounded under writes that never pause
// (store/checkpointer.ts, store/sqlite.ts finishCheckpoint). The checkpointer thread's
// checkpoints never copy the whole log while commits go on, and SQLite starts the log again only
// after one that did: without the writer finishing one, the log grew with every write (3.7 GB in
// 40 s of creates). Observed in the log's own index (the -shm file), whose header holds the
// number of pages in the log, read the way SQLite reads it.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crmSqliteLogPagesMax } from "../../../src/core/limits.ts";
import { openStore } from "../../../src/crm/store/open.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-log-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Where the wal-index header keeps mxFrame, the log's last valid page (SQLite's wal.c, WalIndexHdr). */
const mxFrameOffset = 16;
/**
 * Log pages written in all: many times the bound, so that a log never started again shows against
 * what the bound lets through — the bound, and what the writer adds before the thread's next look
 * (at this machine's pace, ~5,000 pages in its 100 ms).
 */
const pagesToWrite = 12 * crmSqliteLogPagesMax;
/** SQLite's page, as the store uses it (the default). */
const pageBytes = 4096;
/** Writes kept in flight, as concurrent requests keep the writer busy. */
const inFlight = 8;

describe("SQLite's write-ahead log under steady writes", () => {
  test("stays within its bound of pages, its file small, while the writes go on", async () => {
    const path = join(root, "steady.db");
    const db = await openStore(`sqlite:${path}`, undefined, { serving: true });
    try {
      const logPages = () => readFileSync(`${path}-shm`).readUInt32LE(mxFrameOffset);
      // Each write a lead with a page-sized description: a few log pages a commit.
      const description = "x".repeat(3000);
      const write = (i: number) =>
        db.write((tx) =>
          tx.run("INSERT INTO leads (owner_id, created_at, updated_at, search_text, last_name, description) VALUES (1, ?1, ?1, 'steady', 'Steady', ?2)", [
            new Date(i).toISOString(),
            `${i}${description}`,
          ]),
        );
      await db.write((tx) => tx.run("INSERT INTO users (id, username, created_at) VALUES (1, 'writer', '2026-01-01T00:00:00.000Z')"));
      let written = 0;
      let mostPages = 0;
      let last = logPages();
      let next = 0;
      const writer = async () => {
        while (written < pagesToWrite) {
          await write(next++);
          const now = logPages();
          mostPages = Math.max(mostPages, now);
          // A log started again counts from zero.
          written += now >= last ? now - last : now;
          last = now;
        }
      };
      await Promise.all(Array.from({ length: inFlight }, writer));
      expect(written).toBeGreaterThanOrEqual(pagesToWrite);
      expect(mostPages).toBeGreaterThan(crmSqliteLogPagesMax);
      // Started again each time the bound was passed: never more than a third of what was written.
      expect(mostPages).toBeLessThan(pagesToWrite / 3);
      expect(statSync(`${path}-wal`).size).toBeLessThan((pagesToWrite / 3) * pageBytes);
    } finally {
      await db.close();
    }
  }, 60_000);
});
