// A serving SQLite store's write-ahead log stays bounded under writes that never pause
// (store/checkpointer.ts, store/sqlite.ts finishCheckpoint). The checkpointer thread's
// checkpoints never copy the whole log while commits go on, and SQLite starts the log again only
// after one that did: without the writer finishing one, the log grew with every write (3.7 GB in
// 40 s of creates). Observed in the log's own index (the -shm file), whose header holds the
// number of pages in the log, read the way SQLite reads it. Each round writes until the log is
// past its bound, then goes on writing until it starts again: how far past depends on the
// machine's pace, and the round's limits leave it ten times this machine's.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crmSqliteLogPagesMax } from "../../../src/core/limits.ts";
import { openStore } from "../../../src/crm/store/open.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-log-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Where the wal-index header keeps mxFrame, the log's last valid page (SQLite's wal.c, WalIndexHdr). */
const mxFrameOffset = 16;
/** Times the log must pass its bound and start again. */
const rounds = 3;
/** How long one round may write before the log must have started again: generous, for a loaded machine. */
const roundMsMax = 30_000;
/**
 * Log pages a round may reach before the log must have started again: what the writer adds while
 * the thread waits for its next look (100 ms) is ~5,000 pages here, so this leaves room for a machine
 * ten times faster, and keeps a log that never starts again from filling the disk.
 */
const roundPagesMax = 16 * crmSqliteLogPagesMax;
/** Writes kept in flight, as concurrent requests keep the writer busy. */
const inFlight = 8;

describe("SQLite's write-ahead log under steady writes", () => {
  test(
    "is started again each time it passes its bound, while the writes go on",
    async () => {
      const path = join(root, "steady.db");
      const db = await openStore(`sqlite:${path}`, undefined, { serving: true });
      try {
        const logPages = () => readFileSync(`${path}-shm`).readUInt32LE(mxFrameOffset);
        // Each write a lead with a page-sized description: a few log pages a commit.
        const description = "x".repeat(3000);
        let next = 0;
        const write = (i: number) =>
          db.write((tx) =>
            tx.run("INSERT INTO leads (owner_id, created_at, updated_at, search_text, last_name, description) VALUES (1, ?1, ?1, 'steady', 'Steady', ?2)", [
              new Date(i).toISOString(),
              `${i}${description}`,
            ]),
          );
        const writeSome = () => Promise.all(Array.from({ length: inFlight }, () => write(next++)));
        await db.write((tx) => tx.run("INSERT INTO users (id, username, created_at) VALUES (1, 'writer', '2026-01-01T00:00:00.000Z')"));
        for (let round = 0; round < rounds; round++) {
          while (logPages() <= crmSqliteLogPagesMax) await writeSome();
          // Past the bound, and still writing: the log must start again from its beginning.
          const deadline = performance.now() + roundMsMax;
          while (logPages() > crmSqliteLogPagesMax && logPages() < roundPagesMax && performance.now() < deadline) await writeSome();
          expect(logPages(), `round ${round}`).toBeLessThanOrEqual(crmSqliteLogPagesMax);
        }
      } finally {
        await db.close();
      }
    },
    4 * roundMsMax,
  );
});
