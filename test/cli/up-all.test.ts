// `svc up` with nothing chosen runs every service with its embedded defaults, from an empty
// directory: kv, broker, crm and media each answer a first request at the address the banner
// prints, keep their data under ./data, and one SIGTERM stops all of them (media's workers too).
// Ports come from the environment (SVC_<SERVICE>_BIND / _PORT = 0) so the test needs no free
// well-known port; everything else is the default a user gets.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RespClient } from "../kv/support/resp-client.ts";
import { isAlive } from "../kv/support/servers.ts";
import { waitUntil } from "../support/wait.ts";
import { tempDir } from "../support/temp-dir.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");
/** Four services, media's workers and crm's migrations: slow to start on a loaded machine. */
const upStartMs = 60_000;

const cwd = tempDir("svc-up-all-");
const proc = Bun.spawn([process.execPath, cliPath, "up"], {
  cwd,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "pipe",
  env: {
    ...process.env,
    SVC_LOG_LEVEL: "warn",
    SVC_KV_PORT: "0",
    SVC_KV_HTTP_PORT: "0",
    SVC_BROKER_BIND: "127.0.0.1:0",
    SVC_CRM_BIND: "127.0.0.1:0",
    SVC_MEDIA_BIND: "127.0.0.1:0",
  },
});
let stdout = "";
void (async () => {
  for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
})();

afterAll(async () => {
  if (proc.exitCode === null) proc.kill("SIGKILL");
  for (const pid of [...stdout.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]))) if (isAlive(pid)) process.kill(pid, "SIGKILL");
});

/** Child process ids of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
}

/** The address the banner prints for a service's protocol. */
function address(service: string, protocol: string): string {
  const line = stdout.split("\n").find((l) => l.trimStart().startsWith(`${service} (pid`) && l.includes(` ${protocol} `));
  expect(line, `banner line of ${service} ${protocol} in:\n${stdout}`).toBeDefined();
  return /(?:http:\/\/)?(127\.0\.0\.1:\d+)/.exec(line!)![1]!;
}

async function tool(args: string[]): Promise<string> {
  const p = Bun.spawn([process.execPath, cliPath, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(code).toBe(0);
  return out.trim();
}

describe("svc up (every service)", () => {
  test(
    "starts kv, broker, crm and media; each answers at its printed address",
    async () => {
      await waitUntil(() => (stdout.includes("Ctrl-C stops everything") ? true : undefined), "svc up's banner", upStartMs);

      const [kvHost, kvPort] = address("kv", "RESP2").split(":");
      const kv = await RespClient.connect(Number(kvPort), kvHost);
      expect(await kv.call("SET", "greeting", "hello")).toEqual({ s: "OK" });
      kv.close();
      expect(await (await fetch(`http://${address("kv", "REST")}/kv/greeting`)).json()).toEqual({ result: "hello" });

      expect((await fetch(`http://${address("broker", "HTTP")}/healthz`)).status).toBe(200);

      // crm: a user and a token made with its CLI against the default database (./data/crm).
      await tool(["crm", "user", "add", "--username", "ada"]);
      const crmToken = await tool(["crm", "token", "create", "--user", "ada"]);
      const created = await fetch(`http://${address("crm", "HTTP")}/api/v1/leads`, {
        method: "POST",
        headers: { authorization: `Bearer ${crmToken}`, "content-type": "application/json" },
        body: JSON.stringify({ last_name: "Lovelace", company: "Analytical Engines" }),
      });
      expect(created.status).toBe(201);

      // media: a token minted by `svc media token` with the secret svc up generated in ./data/media.
      const mediaToken = await tool(["media", "token", "--user", "ada", "--room", "lab"]);
      const media = address("media", "HTTP");
      expect(await (await fetch(`http://${media}/healthz`)).text()).toBe("ok");
      const stats = await fetch(`http://${media}/v1/stats`, { headers: { authorization: `Bearer ${mediaToken}` } });
      expect(await stats.json()).toEqual({ sessions: 0, rooms: { lab: 0 } });

      for (const path of ["data/kv/appendonly.aof", "data/broker", "data/crm/crm.db", "data/media/token-secret"]) {
        expect(existsSync(join(cwd, path)), path).toBe(true);
      }
    },
    upStartMs + 30_000,
  );

  test("SIGTERM stops every service, media's workers included, and svc up exits 0", async () => {
    const pids = [...new Set([...stdout.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])))];
    expect(pids.length).toBe(4);
    const mediaPid = Number(/media \(pid (\d+)\)/.exec(stdout)![1]);
    const workers = childrenOf(mediaPid);
    expect(workers.length).toBeGreaterThan(0);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    for (const pid of [...pids, ...workers]) await waitUntil(() => (isAlive(pid) ? undefined : true), `pid ${pid} to exit`);
  }, 30_000);
});
