/**
 * A real `svc crm` process and its CLI tools, run against one database and driven with fetch.
 * No bun:test here, so benchmarks can use it too (crm.ts adds the test-only backends).
 */
import { join } from "node:path";
import { crmAddress, spawnServer } from "../../support/spawn.ts";

export const cliPath = join(import.meta.dir, "../../../src/cli.ts");

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface CrmProcess {
  url: string;
  db: string;
  /** The server process's id. */
  pid: number;
  output(): string;
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash would, and waits until it is gone. */
  crash(): Promise<void>;
  /** fetch with a bearer token (or none), a JSON body (a string is sent as is), the parsed answer. */
  call(token: string | null, method: string, path: string, body?: unknown): Promise<Reply>;
  /** Runs `svc crm <args>` against this server's database. */
  tool(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
}

export async function runCrmTool(db: string, args: string[], stdin?: string) {
  const proc = Bun.spawn([process.execPath, cliPath, "crm", ...args, "--db", db], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A tool's trimmed output; throws with its stderr when it fails. */
export async function must(result: Promise<{ code: number; stdout: string; stderr: string }>): Promise<string> {
  const r = await result;
  if (r.code !== 0) throw new Error(`tool failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
}

export async function startCrm(db: string, flags: string[] = []): Promise<CrmProcess> {
  const argv = [process.execPath, cliPath, "crm", "--bind", "127.0.0.1:0", "--db", db, "--log-level", "warn", ...flags];
  const server = await spawnServer("svc crm", argv, crmAddress);
  const url = `http://${server.where}`;
  return {
    url,
    db,
    pid: server.proc.pid,
    output: server.output,
    stop: server.stop,
    async crash() {
      server.proc.kill("SIGKILL");
      await server.proc.exited;
    },
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
