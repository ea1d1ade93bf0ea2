// The net under crm's input checks (src/crm/store/store-errors.ts): real SQLite and PostgreSQL
// refusals — unique keys, NOT NULL, foreign keys, CHECKs, values out of range or of the wrong
// type, NUL in text — each become the 409 or 422 they mean through the store's own Queryable, and
// a statement that is simply wrong stays an error (a 500), not a client's fault.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isSvcError } from "../../src/core/errors.ts";
import type { Db } from "../../src/crm/store/db.ts";
import { openPostgres } from "../../src/crm/store/postgres.ts";
import { openSqlite } from "../../src/crm/store/sqlite.ts";
import { isStoreRefusal } from "../../src/crm/store/store-errors.ts";
import { type PostgresServer, startPostgres } from "../support/postgres.ts";

const schema = [
  "CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
  "CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id), n INTEGER CHECK (n >= 0), label VARCHAR(3))",
];

/** What a failing statement is answered with: [status, code, details] of the SvcError, or the raw error's kind. */
async function outcome(db: Db, sql: string, params: unknown[]): Promise<unknown> {
  try {
    await db.write((tx) => tx.run(sql, params));
    return "ok";
  } catch (error) {
    if (!isSvcError(error)) return "unmapped";
    expect(isStoreRefusal(error)).toBe(true);
    expect(error.cause).toBeDefined();
    return [error.status, error.code, error.details ?? null];
  }
}

function cases(name: string, open: () => Promise<Db>) {
  describe(`store refusals on ${name}`, () => {
    let db: Db;
    beforeAll(async () => {
      db = await open();
      for (const s of schema) await db.write((tx) => tx.run(s));
      await db.write((tx) => tx.run("INSERT INTO parent (id, name) VALUES (1, 'a')"));
    }, 60_000);
    afterAll(() => db?.close());

    test("a unique key is 409; NOT NULL is 422 on the column", async () => {
      expect(await outcome(db, "INSERT INTO parent (id, name) VALUES ($1, $2)", [2, "a"])).toEqual([409, "conflict", null]);
      expect(await outcome(db, "INSERT INTO parent (id, name) VALUES ($1, $2)", [1, "b"])).toEqual([409, "conflict", null]);
      expect(await outcome(db, "INSERT INTO parent (id, name) VALUES ($1, $2)", [3, null])).toEqual([
        422,
        "invalid",
        [{ field: "name", message: "is required" }],
      ]);
    });

    test("a foreign key and a CHECK are 422", async () => {
      const fk = (await outcome(db, "INSERT INTO child (id, parent_id) VALUES ($1, $2)", [1, 99])) as unknown[];
      expect(fk.slice(0, 2)).toEqual([422, "invalid"]);
      expect((fk[2] as { message: string }[])[0]!.message).toBe("names something that does not exist");
      const check = (await outcome(db, "INSERT INTO child (id, n) VALUES ($1, $2)", [2, -1])) as unknown[];
      expect(check.slice(0, 2)).toEqual([422, "invalid"]);
    });

    test("nothing of a refused write stays", async () => {
      await expect(
        db.write(async (tx) => {
          await tx.run("INSERT INTO parent (id, name) VALUES ($1, $2)", [10, "kept?"]);
          await tx.run("INSERT INTO parent (id, name) VALUES ($1, $2)", [11, "a"]);
        }),
      ).rejects.toMatchObject({ status: 409 });
      expect(await db.get("SELECT id FROM parent WHERE id = $1", [10])).toBeUndefined();
    });

    test("a statement that is wrong in itself stays an error for the server to answer 500", async () => {
      expect(await outcome(db, "INSERT INTO nowhere (id) VALUES ($1)", [1])).toBe("unmapped");
    });
  });
}

cases("SQLite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-store-errors-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return openSqlite(join(dir, "e.db"));
});

let postgres: PostgresServer | undefined;
afterAll(async () => postgres?.stop(), 30_000);
cases("PostgreSQL", async () => {
  postgres = await startPostgres();
  return openPostgres(await postgres.createDatabase("errors"));
});

describe("values only PostgreSQL refuses", () => {
  test("an integer out of range, a wrong type, text too long or holding NUL: 422", async () => {
    const db = await openPostgres(postgres!.url("errors"));
    try {
      const status = async (sql: string, params: unknown[]) => ((await outcome(db, sql, params)) as unknown[]).slice(0, 2);
      expect(await status("INSERT INTO child (id, n) VALUES ($1, $2)", [20, 2 ** 40])).toEqual([422, "invalid"]);
      expect(await status("INSERT INTO child (id, n) VALUES ($1, $2)", [21, ""])).toEqual([422, "invalid"]);
      expect(await status("INSERT INTO child (id, label) VALUES ($1, $2)", [22, "long"])).toEqual([422, "invalid"]);
      expect(await status("INSERT INTO parent (id, name) VALUES ($1, $2)", [23, "a\u0000b"])).toEqual([422, "invalid"]);
    } finally {
      await db.close();
    }
  });
});
