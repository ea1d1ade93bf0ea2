// The PostgreSQL store's connections carry its planner settings (store/postgres.ts): each one a
// pooled connection opens with, whichever connection a statement lands on.
import { describe, expect, test } from "bun:test";
import { openStore } from "../../../src/crm/store/open.ts";
import { postgresBackend } from "../support/crm.ts";

const backend = postgresBackend();

describe("PostgreSQL store sessions", () => {
  test("every pooled connection plans without Memoize and runs without JIT", async () => {
    const db = await openStore(await backend.freshDb());
    try {
      // Statements side by side, so that several of the pool's connections answer.
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          db.get<{ enable_memoize: string; jit: string; pid: number }>(
            "SELECT current_setting('enable_memoize') AS enable_memoize, current_setting('jit') AS jit, pg_backend_pid() AS pid",
          ),
        ),
      );
      expect(new Set(answers.map((a) => a!.pid)).size).toBeGreaterThan(1);
      expect(new Set(answers.map((a) => a!.enable_memoize))).toEqual(new Set(["off"]));
      expect(new Set(answers.map((a) => a!.jit))).toEqual(new Set(["off"]));
    } finally {
      await db.close();
    }
  }, 60_000);
});
