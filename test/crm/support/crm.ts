/**
 * A real `svc crm` for tests, on SQLite or on a real PostgreSQL (test/support/postgres.ts): each
 * server gets a fresh database, is started as its own process on a free port, and is driven with
 * fetch (process.ts). Its CLI tools run as processes against the same database.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresServer, startPostgres } from "../../support/postgres.ts";
import { type CrmProcess, must, runCrmTool, startCrm } from "./process.ts";

export { cliPath, type CrmProcess, type Reply, runCrmTool, startCrm } from "./process.ts";

/** Where a database comes from: a file per server, or a database per server on one PostgreSQL. */
export interface Backend {
  name: "sqlite" | "postgres";
  freshDb(): Promise<string>;
}

export function sqliteBackend(): Backend {
  const root = mkdtempSync(join(tmpdir(), "svc-crm-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  return { name: "sqlite", freshDb: async () => `sqlite:${join(root, `crm${++n}.db`)}` };
}

export function postgresBackend(): Backend {
  let server: Promise<PostgresServer> | undefined;
  afterAll(async () => {
    if (server !== undefined) await (await server).stop();
  }, 30_000);
  let n = 0;
  return {
    name: "postgres",
    async freshDb() {
      server ??= startPostgres();
      return (await server).createDatabase(`crm${++n}`);
    },
  };
}

/** The cast every sharing test uses: an admin, a manager over two reps, and a rep's own token. */
export interface World {
  crm: CrmProcess;
  admin: string;
  manager: string;
  alice: string;
  bob: string;
  ids: Record<"admin" | "manager" | "alice" | "bob", number>;
}

/**
 * Roles ceo > sales-manager > sales-rep; `manager` is a sales-manager, alice and bob are
 * sales-reps; `admin` is an admin without a role. Created with the CLI tools, as a user would.
 * `flags` go to the server. The caller stops `crm`.
 */
export async function makeWorld(backend: Backend, flags: string[] = []): Promise<World> {
  const db = await backend.freshDb();
  await must(runCrmTool(db, ["role", "add", "--name", "ceo"]));
  await must(runCrmTool(db, ["role", "add", "--name", "sales-manager", "--parent", "ceo"]));
  await must(runCrmTool(db, ["role", "add", "--name", "sales-rep", "--parent", "sales-manager"]));
  await must(runCrmTool(db, ["user", "add", "--username", "admin", "--admin"]));
  await must(runCrmTool(db, ["user", "add", "--username", "manager", "--role", "sales-manager"]));
  await must(runCrmTool(db, ["user", "add", "--username", "alice", "--role", "sales-rep"]));
  await must(runCrmTool(db, ["user", "add", "--username", "bob", "--role", "sales-rep"]));
  const tokens = await Promise.all(["admin", "manager", "alice", "bob"].map((u) => must(runCrmTool(db, ["token", "create", "--user", u]))));
  const crm = await startCrm(db, flags);
  const users = (await crm.call(tokens[0]!, "GET", "/api/v1/settings/users")).body.data as { id: number; username: string }[];
  const id = (name: string) => users.find((u) => u.username === name)!.id;
  return {
    crm,
    admin: tokens[0]!,
    manager: tokens[1]!,
    alice: tokens[2]!,
    bob: tokens[3]!,
    ids: { admin: id("admin"), manager: id("manager"), alice: id("alice"), bob: id("bob") },
  };
}

/** Making a world (PostgreSQL, the CLI tools, a server) on a loaded 2-core machine: a bound, not a timing claim. */
export const worldHookMs = 60_000;

/**
 * A world for the tests of the block this is called in: made before them and handed to `use`,
 * its server stopped after them. `flags` go to the server.
 */
export function worldForSuite(backend: Backend, use: (w: World) => void, flags: string[] = []): void {
  let made: World | undefined;
  beforeAll(async () => {
    made = await makeWorld(backend, flags);
    use(made);
  }, worldHookMs);
  afterAll(() => made?.crm.stop(), worldHookMs);
}

/**
 * An after-save flow on accounts that creates a "Welcome {name}" case carrying the account's
 * billing_country as cf_region. With cases' cf_region required, an account without a country is
 * refused after it was written: its case is invalid, so the request rolls back.
 */
export const welcomeCaseFlow = {
  name: "account_gets_a_case",
  object: "accounts",
  timing: "after_save",
  trigger: "created",
  steps: [
    {
      type: "create_record",
      object: "cases",
      values: { subject: { template: "Welcome {name}" }, account_id: { ref: "id" }, cf_region: { ref: "billing_country" } },
    },
  ],
};
