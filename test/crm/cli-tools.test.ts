// The operator's CLI as an operator runs it, against a real store and a real server: role, user
// and token lists (tables and --json), disabling a user (their tokens answer 401 like revoked
// ones, their password and browser session stop, their records keep them as owner, enabling
// restores it), revoking any user's token, and the errors — unknown subcommands and tools,
// missing and malformed flags, unknown users and tokens.
import { afterAll, describe, expect, test } from "bun:test";
import { crmRecordIdMax } from "../../src/core/limits.ts";
import { type Backend, type CrmProcess, postgresBackend, runCrmTool, sqliteBackend, startCrm } from "./support/crm.ts";

const started: CrmProcess[] = [];
afterAll(async () => {
  for (const crm of started) await crm.stop();
}, 30_000);

/** A tool's output; fails the test with its stderr when it does not exit 0. */
async function ok(db: string, args: string[], stdin?: string): Promise<string> {
  const r = await runCrmTool(db, args, stdin);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout.trimEnd();
}

/** The rows of a table the CLI printed, each split on its column gaps (two or more spaces). */
const rows = (out: string) => out.split("\n").map((line) => line.split(/ {2,}/));

const password = "correct horse battery";

async function signIn(crm: CrmProcess, username: string): Promise<Response> {
  return fetch(`${crm.url}/settings/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ username, password }),
    headers: { "content-type": "application/x-www-form-urlencoded" },
    redirect: "manual",
  });
}

function operatorFlow(backend: Backend) {
  test(`on ${backend.name}: list roles, users and tokens; disable and enable a user; revoke any user's token`, async () => {
    const db = await backend.freshDb();
    await ok(db, ["role", "add", "--name", "ceo"]);
    await ok(db, ["role", "add", "--name", "sales rep", "--parent", "ceo"]);
    await ok(db, ["user", "add", "--username", "root", "--admin"]);
    await ok(db, ["user", "add", "--username", "ann", "--role", "sales rep", "--password-stdin"], `${password}\n`);
    const admin = await ok(db, ["token", "create", "--user", "root"]);
    const annToken = await ok(db, ["token", "create", "--user", "ann", "--name", "laptop"]);
    const annSecond = await ok(db, ["token", "create", "--user", "ann", "--name", "ci"]);

    expect(rows(await ok(db, ["role", "list"]))).toEqual([
      ["ID", "NAME", "PARENT", "USERS"],
      ["1", "ceo", "-", "0"],
      ["2", "sales rep", "ceo", "1"],
    ]);
    expect(JSON.parse(await ok(db, ["role", "list", "--json"]))).toEqual([
      { id: 1, name: "ceo", parent: null, users: 0 },
      { id: 2, name: "sales rep", parent: "ceo", users: 1 },
    ]);

    const crm = await startCrm(db);
    started.push(crm);
    const lead = await crm.call(annToken, "POST", "/api/v1/leads", { last_name: "Kept", company: "Owner" });
    expect(lead.status).toBe(201);
    const session = (await signIn(crm, "ann")).headers.get("set-cookie")!.split(";")[0]!;
    const page = async () => (await fetch(`${crm.url}/settings`, { headers: { cookie: session } })).text();
    expect(await page()).toContain("laptop");

    const users = rows(await ok(db, ["user", "list"]));
    expect(users[0]).toEqual(["ID", "USERNAME", "ROLE", "ADMIN", "STATUS", "TOKENS", "CREATED"]);
    expect(users.slice(1).map((r) => r.slice(0, 6))).toEqual([
      ["1", "root", "-", "yes", "active", "1"],
      ["2", "ann", "sales rep", "no", "active", "2"],
    ]);

    const disabled = await ok(db, ["user", "disable", "--username", "ann"]);
    expect(disabled).toBe("user ann (id 2) disabled: their API tokens and password no longer work; the records they own keep them as owner");
    for (const token of [annToken, annSecond]) {
      const r = await crm.call(token, "GET", "/api/v1/leads");
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("unauthorized");
    }
    expect((await signIn(crm, "ann")).status).toBe(401);
    expect(await page()).not.toContain("laptop");
    // Their record stays theirs, and the admin still reads it.
    expect((await crm.call(admin, "GET", `/api/v1/leads/${lead.body.id}`)).body.owner_id).toBe(lead.body.owner_id);
    const listedUsers = (await crm.call(admin, "GET", "/api/v1/settings/users")).body.data;
    expect(listedUsers.find((u: { username: string }) => u.username === "ann").disabled_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(listedUsers.find((u: { username: string }) => u.username === "root").disabled_at).toBeNull();
    const status = rows(await ok(db, ["user", "list"]))[2]![4]!;
    expect(status).toMatch(/^disabled \d{4}-\d{2}-\d{2}T/);
    expect(await ok(db, ["user", "disable", "--username", "ann"])).toBe(`user ann was already disabled (since ${status.slice("disabled ".length)})`);
    const tokens = rows(await ok(db, ["token", "list"]));
    expect(tokens.map((r) => [r[0], r[1], r[2], r[4]])).toEqual([
      ["ID", "USER", "NAME", "STATUS"],
      ["1", "root", "cli", "live"],
      ["2", "ann", "laptop", "user disabled"],
      ["3", "ann", "ci", "user disabled"],
    ]);
    expect(tokens[2]![3]).toBe(annToken.slice(0, 10));

    expect(await ok(db, ["user", "enable", "--username", "ann"])).toBe("user ann (id 2) enabled");
    expect(await ok(db, ["user", "enable", "--username", "ann"])).toBe("user ann was not disabled");
    expect((await crm.call(annToken, "GET", "/api/v1/leads")).status).toBe(200);
    expect((await signIn(crm, "ann")).status).toBe(303);

    expect(await ok(db, ["token", "revoke", "--id", "2"])).toBe(`revoked token 2 ("laptop", ${annToken.slice(0, 10)}…) of user ann`);
    expect((await crm.call(annToken, "GET", "/api/v1/leads")).status).toBe(401);
    expect((await crm.call(annSecond, "GET", "/api/v1/leads")).status).toBe(200);
    const again = await ok(db, ["token", "revoke", "--id", "2"]);
    expect(again).toMatch(/^token 2 \("laptop", crm_.{6}…\) of user ann was already revoked at \d{4}-/);
    const annOnly = JSON.parse(await ok(db, ["token", "list", "--user", "ann", "--json"]));
    expect(annOnly.map((t: { id: number; name: string; user: string; user_disabled: boolean }) => [t.id, t.name, t.user, t.user_disabled])).toEqual([
      [2, "laptop", "ann", false],
      [3, "ci", "ann", false],
    ]);
    expect(annOnly[0].revoked_at).toMatch(/^\d{4}-/);
    expect(annOnly[1].revoked_at).toBeNull();
    expect(JSON.stringify(annOnly)).not.toContain(annToken.slice(10));
  }, 60_000);
}

describe("svc crm operator tools", () => {
  operatorFlow(sqliteBackend());
  operatorFlow(postgresBackend());

  test("empty lists say so; names with control characters cannot break a table's lines", async () => {
    const db = await sqliteBackend().freshDb();
    expect(await ok(db, ["role", "list"])).toBe("no roles");
    expect(await ok(db, ["user", "list"])).toBe("no users");
    expect(await ok(db, ["token", "list"])).toBe("no tokens");
    expect(await ok(db, ["user", "list", "--json"])).toBe("[]");
    await ok(db, ["user", "add", "--username", "eve"]);
    await ok(db, ["token", "create", "--user", "eve", "--name", "two\nlines\u001b[2J"]);
    const out = await ok(db, ["token", "list"]);
    expect(out.split("\n")).toHaveLength(2);
    expect(out).toContain("two\\u000alines\\u001b[2J");
  });

  test("unknown users and tokens are exit 1 with the reason; a disabled user gets no new token", async () => {
    const db = await sqliteBackend().freshDb();
    await ok(db, ["user", "add", "--username", "dan"]);
    await ok(db, ["user", "disable", "--username", "dan"]);
    for (const [args, message] of [
      [["user", "disable", "--username", "nobody"], 'svc crm user disable: no user "nobody"'],
      [["user", "enable", "--username", "nobody"], 'svc crm user enable: no user "nobody"'],
      [["token", "list", "--user", "nobody"], 'svc crm token list: no user "nobody"'],
      [["token", "revoke", "--id", "99"], "svc crm token revoke: no token 99"],
      [["token", "revoke", "--id", String(crmRecordIdMax)], `svc crm token revoke: no token ${crmRecordIdMax}`],
      [["token", "create", "--user", "dan"], 'svc crm token create: user "dan" is disabled; svc crm user enable first'],
    ] as const) {
      const r = await runCrmTool(db, [...args]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr.trim(), args.join(" ")).toBe(message);
      expect(r.stdout).toBe("");
    }
  });

  test("an unknown subcommand or tool, a missing or malformed flag: exit 2 saying which", async () => {
    const db = await sqliteBackend().freshDb();
    for (const [args, message] of [
      [["token", "revok"], 'svc crm token: unknown subcommand "revok"; use create, list, revoke'],
      [["user", "remove", "--username", "x"], 'svc crm user: unknown subcommand "remove"; use add, list, disable, enable'],
      [["role", "--name", "x"], "svc crm role: name a subcommand before flags: add, list"],
      [["tokens", "list"], 'svc crm: unknown tool "tokens"; tools: role, user, token, sharing'],
      [["token", "revoke"], "svc crm token revoke: missing required flag --id"],
      [["user", "disable"], "svc crm user disable: missing required flag --username"],
      [["token", "revoke", "--id", "0"], `svc crm token revoke: --id: expected a whole number from 1 to ${crmRecordIdMax}, got "0"`],
      [
        ["token", "revoke", "--id", String(crmRecordIdMax + 1)],
        `svc crm token revoke: --id: expected a whole number from 1 to ${crmRecordIdMax}, got "${crmRecordIdMax + 1}"`,
      ],
      [["token", "revoke", "--id", "1x"], `svc crm token revoke: --id: expected a whole number from 1 to ${crmRecordIdMax}, got "1x"`],
      [["token", "list", "extra"], 'svc crm token list: unexpected argument "extra"'],
    ] as const) {
      const r = await runCrmTool(db, [...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.split("\n")[0], args.join(" ")).toBe(message);
    }
    const bare = await runCrmTool(db, ["token"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("usage: svc crm token <create|list|revoke>");
  });
});
