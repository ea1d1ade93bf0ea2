// `svc crm` and its tools as a user runs them: flags refused before it listens, the default
// SQLite store under the working directory in WAL mode, migrations recorded and not re-run,
// users, roles and tokens from the CLI, tokens and passwords never stored in clear.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schemaVersion } from "../../src/crm/store/migrations.ts";
import { cliPath, runCrmTool, startCrm } from "./support/crm.ts";
import { crmAddress, spawnServer } from "../support/spawn.ts";

const root = mkdtempSync(join(tmpdir(), "svc-crm-service-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDb = () => `sqlite:${join(root, `s${++n}.db`)}`;

async function refused(flags: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([process.execPath, cliPath, "crm", ...flags], { stdout: "ignore", stderr: "pipe", cwd: root });
  const stderr = await new Response(proc.stderr).text();
  return { code: await proc.exited, stderr };
}

describe("svc crm flags", () => {
  test("a bad --bind, --db or --max-request-body-bytes past 1MiB is refused with exit 2 before it listens", async () => {
    for (const [flags, message] of [
      [["--bind", "3000"], /--bind: expected host:port/],
      [["--db", "mysql://x"], /--db: expected sqlite:PATH or postgres:\/\//],
      [["--db", "sqlite:"], /--db: sqlite: needs a path/],
      [["--max-request-body-bytes", String(1024 * 1024 + 1)], /--max-request-body-bytes: expected a size/],
    ] as const) {
      const { code, stderr } = await refused([...flags]);
      expect(code, flags.join(" ")).toBe(2);
      expect(stderr, flags.join(" ")).toMatch(message);
    }
  });

  test("without --db it keeps data/crm/crm.db under the working directory, in WAL mode, and migrations run once", async () => {
    const cwd = mkdtempSync(join(root, "cwd-"));
    const argv = [process.execPath, cliPath, "crm", "--bind", "127.0.0.1:0", "--log-level", "info"];
    const first = await spawnServer("svc crm", argv, crmAddress, { cwd });
    expect(first.output()).toContain("crm schema migrated");
    await first.stop();
    const path = join(cwd, "data/crm/crm.db");
    expect(existsSync(path)).toBe(true);
    const second = await spawnServer("svc crm", argv, crmAddress, { cwd });
    expect(second.output()).not.toContain("crm schema migrated");
    await second.stop();
    const db = new Database(path, { readonly: true });
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    // Every version once (SQLite's list includes those with nothing to do on it, such as 6).
    expect(db.query("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(
      Array.from({ length: schemaVersion }, (_, i) => ({ version: i + 1 })),
    );
    db.close();
  });
});

describe("svc crm tools", () => {
  test("role add, user add and token create build a user whose printed token works; nothing secret is stored in clear", async () => {
    const db = freshDb();
    expect((await runCrmTool(db, ["role", "add", "--name", "sales"])).code).toBe(0);
    const added = await runCrmTool(db, ["user", "add", "--username", "ann", "--role", "sales", "--password-stdin"], "correct horse battery\n");
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toMatch(/^user ann \(id \d+\)/);
    const created = await runCrmTool(db, ["token", "create", "--user", "ann", "--name", "ci"]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^crm_[A-Za-z0-9_-]{43}$/);
    const crm = await startCrm(db);
    try {
      const r = await crm.call(token, "POST", "/api/v1/leads", { last_name: "Cli", company: "Tools" });
      expect(r.status).toBe(201);
      expect((await crm.call(token, "GET", "/api/v1/settings/tokens")).body.data).toMatchObject([{ name: "ci" }]);
    } finally {
      await crm.stop();
    }
    const sqlite = new Database(db.slice("sqlite:".length), { readonly: true });
    const stored = sqlite.query("SELECT token_hash, prefix FROM api_tokens").get() as { token_hash: string; prefix: string };
    expect(stored.token_hash).toBe(new Bun.CryptoHasher("sha256").update(token).digest("hex"));
    expect(stored.token_hash).not.toContain(token.slice(4));
    const user = sqlite.query("SELECT password_hash FROM users WHERE username = 'ann'").get() as { password_hash: string };
    expect(user.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(await Bun.password.verify("correct horse battery", user.password_hash)).toBe(true);
    sqlite.close();
  });

  test("a duplicate user, an unknown role or parent, an unknown user's token: exit 1 with the reason", async () => {
    const db = freshDb();
    expect((await runCrmTool(db, ["user", "add", "--username", "dup"])).code).toBe(0);
    for (const [args, message] of [
      [["user", "add", "--username", "dup"], /user "dup" exists/],
      [["user", "add", "--username", "x", "--role", "ghost"], /role no role "ghost"/],
      [["user", "add", "--username", "bad name"], /username/],
      [["role", "add", "--name", "r", "--parent", "ghost"], /parent no role "ghost"/],
      [["token", "create", "--user", "nobody"], /no user "nobody"/],
    ] as const) {
      const r = await runCrmTool(db, [...args]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
    expect((await runCrmTool(db, ["user", "add", "--username", "short", "--password-stdin"], "1234567")).code).toBe(2);
  });

  test("a tool without its required flag, or a group without a subcommand, is a usage error (exit 2)", async () => {
    const db = freshDb();
    expect((await runCrmTool(db, ["token", "create"])).code).toBe(2);
    const bare = await runCrmTool(db, ["user"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("usage: svc crm user <add|list|disable|enable>");
  });
});
