/**
 * The examples of docs/crm.md and docs/crm-rules.md, run as written, in order, against one real
 * `svc crm` on a fresh database, each page continuing where the one before left off; every answer
 * is checked against what the page says it is (test/crm/support/doc-examples.ts has the format).
 *
 * Console sessions run in bash with `svc` on the PATH (this checkout's CLI) and SVC_CRM_DB naming
 * the server's database, so the tools and the server share it as the docs' defaults do; variables
 * a session sets (the token) are there for later sessions and requests. The one thing changed from
 * the page: the server listens on a free port, which replaces http://127.0.0.1:3000.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath, type CrmProcess, sqliteBackend, startCrm } from "./support/crm.ts";
import { type ConsoleCommand, type Example, examplesOf, type HttpAnswerExample, type HttpRequestExample, mismatch } from "./support/doc-examples.ts";

const pages = ["docs/crm.md", "docs/crm-rules.md"];
const documentedAddress = "http://127.0.0.1:3000";
const root = join(import.meta.dir, "../..");
/** A console example starts several tool processes (each opens the database): a bound on a loaded machine. */
const exampleMs = 30_000;

const backend = sqliteBackend();
const work = mkdtempSync(join(tmpdir(), "svc-crm-docs-"));
let crm: CrmProcess;
/** The environment sessions run in, with what earlier sessions set. */
let env: Record<string, string>;

beforeAll(async () => {
  const db = await backend.freshDb();
  crm = await startCrm(db);
  const bin = join(work, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "svc"), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  chmodSync(join(bin, "svc"), 0o755);
  env = { ...(process.env as Record<string, string>), PATH: `${bin}:${process.env.PATH}`, SVC_CRM_DB: db };
}, exampleMs);
afterAll(async () => {
  await crm?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Printed after each command with its exit status, and before the environment: nothing a command prints looks like them. */
const commandEnd = /__svc_docs_exit_(\d+)__/g;
const envStart = "__svc_docs_env__";

/** Runs a session's commands in one bash; each command's output and exit status, and the environment after. */
async function runSession(commands: ConsoleCommand[]) {
  const script = [
    "set -a", // assignments are exported, so the environment printed at the end carries them
    ...commands.flatMap((c) => [c.command.replaceAll(documentedAddress, crm.url), `printf '__svc_docs_exit_%d__' "$?"`]),
    `printf '${envStart}'`,
    "env -0",
  ].join("\n");
  const proc = Bun.spawn(["bash", "-c", script], { cwd: work, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const [outputs, environment = ""] = stdout.split(envStart);
  const results: { output: string; status: number }[] = [];
  let from = 0;
  for (const m of outputs!.matchAll(commandEnd)) {
    results.push({ output: outputs!.slice(from, m.index).replace(/\n$/, ""), status: Number(m[1]) });
    from = m.index + m[0].length;
  }
  const after = Object.fromEntries(
    environment
      .split("\0")
      .filter((e) => e.includes("="))
      .map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
  );
  return { results, stderr, after };
}

/** `$NAME` replaced by what the sessions so far set. */
function substitute(text: string): string {
  return text.replace(/\$([A-Z_][A-Z0-9_]*)/g, (_, name: string) => {
    const value = env[name];
    if (value === undefined) throw new Error(`$${name} is not set by any example before this one`);
    return value;
  });
}

async function runRequest(request: HttpRequestExample, expected: HttpAnswerExample) {
  const headers = new Headers(request.headers.map(([k, v]) => [k, substitute(v)]));
  const response = await fetch(`${crm.url}${substitute(request.path)}`, {
    method: request.method,
    headers,
    body: request.body === "" ? undefined : request.body,
  });
  const text = await response.text();
  const where = `${request.method} ${request.path} answered ${response.status} ${text}`;
  expect(response.status, where).toBe(expected.status);
  for (const [name, value] of expected.headers) expect(response.headers.get(name), `${where}: header ${name}`).toBe(value);
  if (expected.body !== undefined) expect(mismatch(expected.body, JSON.parse(text)), where).toBeNull();
}

function title(page: string, example: Example): string {
  if (example.kind === "console") return `${page}:${example.line} $ ${example.commands.map((c) => c.command.split(" ").slice(0, 4).join(" ")).join("; ")}`;
  return `${page}:${example.line} ${example.request.method} ${example.request.path} → ${example.answer.status}`;
}

for (const page of pages) {
  describe(page, () => {
    let examples: Example[] = [];
    let problem: unknown = null;
    try {
      examples = examplesOf(readFileSync(join(root, page), "utf8"), page);
    } catch (error) {
      problem = error;
    }

    test("every fenced block is an example the test runs, or marked text", () => {
      expect(problem).toBeNull();
      expect(examples.filter((e) => e.kind === "request").length).toBeGreaterThan(0);
    });

    for (const example of examples) {
      test(
        title(page, example),
        async () => {
          if (example.kind === "request") return runRequest(example.request, example.answer);
          const { results, stderr, after } = await runSession(example.commands);
          // Kept even if a command's output differs, so later examples run with what it set.
          env = after;
          expect(results.length, stderr).toBe(example.commands.length);
          example.commands.forEach((c, i) => {
            expect(results[i]!.status, `$ ${c.command}\n${stderr}`).toBe(0);
            expect(results[i]!.output, `$ ${c.command}`).toBe(c.output);
          });
        },
        exampleMs,
      );
    }
  });
}
