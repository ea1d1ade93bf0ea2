/**
 * A real `svc crm` for tests, on SQLite or on a real PostgreSQL (test/support/postgres.ts): each
 * server gets a fresh database, is started as its own process on a free port, and is driven with
 * fetch. Its CLI tools run as processes against the same database.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresServer, startPostgres } from "../../support/postgres.ts";
import { crmAddress, spawnServer } from "../../support/spawn.ts";

export const cliPath = join(import.meta.dir, "../../../src/cli.ts");

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

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface CrmProcess {
  url: string;
  db: string;
  output(): string;
  stop(): Promise<void>;
  /** fetch with a bearer token (or none), a JSON body (a string is sent as is), the parsed answer. */
  call(token: string | null, method: string, path: string, body?: unknown): Promise<Reply>;
  /** Runs `svc crm <args>` against this server's database. */
  tool(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
}


export async function runCrmTool(db: string, args: string[], stdin?: string) {
  const proc = Bun.spawn([process.execPath, cliPath, "crm", ...args, "--db", db], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export async function startCrm(db: string, flags: string[] = []): Promise<CrmProcess> {
  const argv = [process.execPath, cliPath, "crm", "--bind", "127.0.0.1:0", "--db", db, "--log-level", "warn", ...flags];
  const server = await spawnServer("svc crm", argv, crmAddress);
  const url = `http://${server.where}`;
  return {
    url, db, output: server.output, stop: server.stop,
    async call(token, method, path, body) {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const init: RequestInit = { method, headers };
      if (body !== undefined) {
        init.body = typeof body === "string" ? body : JSON.stringify(body);
        headers["content-type"] = "application/json";
      }
      const response = await fetch(`${url}${path}`, init);
      const raw = await response.text();
      let parsed: unknown = raw;
      try {
        parsed = raw === "" ? null : JSON.parse(raw);
      } catch {}
      return { status: response.status, headers: response.headers, body: parsed };
    },
    tool: (args, stdin) => runCrmTool(db, args, stdin),
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

async function must(result: Promise<{ code: number; stdout: string; stderr: string }>): Promise<string> {
  const r = await result;
  if (r.code !== 0) throw new Error(`tool failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * Roles ceo > sales-manager > sales-rep; `manager` is a sales-manager, alice and bob are
 * sales-reps; `admin` is an admin without a role. Created with the CLI tools, as a user would.
 * The caller stops `crm`.
 */
export async function makeWorld(backend: Backend): Promise<World> {
  const db = await backend.freshDb();
  await must(runCrmTool(db, ["role", "add", "--name", "ceo"]));
  await must(runCrmTool(db, ["role", "add", "--name", "sales-manager", "--parent", "ceo"]));
  await must(runCrmTool(db, ["role", "add", "--name", "sales-rep", "--parent", "sales-manager"]));
  await must(runCrmTool(db, ["user", "add", "--username", "admin", "--admin"]));
  await must(runCrmTool(db, ["user", "add", "--username", "manager", "--role", "sales-manager"]));
  await must(runCrmTool(db, ["user", "add", "--username", "alice", "--role", "sales-rep"]));
  await must(runCrmTool(db, ["user", "add", "--username", "bob", "--role", "sales-rep"]));
  const tokens = await Promise.all(["admin", "manager", "alice", "bob"].map((u) => must(runCrmTool(db, ["token", "create", "--user", u]))));
  const crm = await startCrm(db);
  const users = (await crm.call(tokens[0]!, "GET", "/api/v1/settings/users")).body.data as { id: number; username: string }[];
  const id = (name: string) => users.find((u) => u.username === name)!.id;
  return {
    crm, admin: tokens[0]!, manager: tokens[1]!, alice: tokens[2]!, bob: tokens[3]!,
    ids: { admin: id("admin"), manager: id("manager"), alice: id("alice"), bob: id("bob") },
  };
}
