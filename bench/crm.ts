/**
 * crm at 100k records per object: list with `q` under sharing, and creates through the rules
 * engine, on SQLite and PostgreSQL side by side.
 *
 * Set-up, the same on both stores: a role hierarchy (ceo > sales-vp > east/west managers > reps;
 * marketing and support under the ceo) and fifteen non-admin users, every object's default access
 * set to private, and one sharing rule per object (owner-based or criteria-based), so a rep sees
 * only their own records plus what the rules open — sharing really filters. Then 100k records per
 * object, owned uniformly by those users, are bulk loaded straight into the store
 * (bench/lib/crm-load.ts: prepared INSERTs on SQLite, COPY on PostgreSQL, the store's own
 * indexes and FTS triggers maintained). The load is set-up, not a measurement; its time is shown.
 * The server is restarted after the load, as a deployment is after an import.
 *
 * List: a real `svc crm` process driven by wrk (few connections, as a handful of users' browsers),
 * each request `GET /api/v1/{object}?q=…` as a rep (and a manager, who also sees four reps'
 * records): bearer auth, the sharing predicate, the trigram search and `count(*)` for `total`,
 * one page of 20 newest first. p50/p99 are wrk's. "visible / all" is the user's `total` against
 * an admin's for the same q: how much sharing cut away.
 *
 * Creates: POST /api/v1/opportunities as a rep, with 5 validation rules, 2 workflow rules and 1
 * after-save flow on the object. Four bodies in rotation, all valid; one of them fires a workflow
 * rule that sets probability, two fire one that writes a description, and one meets the flow,
 * which creates a related case (a second save through the whole order of execution). Before the
 * run, one create of each body is checked to have done exactly that.
 *
 * Server CPU is the crm process's user+system time over the run (100% = one core); PostgreSQL's
 * own processes are not counted in it. The machine is two shared cores: numbers move with
 * whatever else runs, so compare the two columns of one run rather than runs with each other.
 *
 * SVC_BENCH_CRM_RECORDS: records per object (default 100000).
 * SVC_BENCH_CRM_SECONDS: length of each wrk run (default 5).
 * SVC_BENCH_CRM_STORES: which stores, comma-separated (default sqlite,postgres).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CrmObject, crmObjects } from "../src/crm/rules/contract.ts";
import { type CrmProcess, must, runCrmTool, startCrm } from "../test/crm/support/process.ts";
import { type PostgresServer, startPostgres } from "../test/support/postgres.ts";
import { loadPostgres, loadSqlite } from "./lib/crm-load.ts";
import { fmt } from "./lib/redis-benchmark.ts";
import { wrk, type WrkResult } from "./lib/wrk.ts";
import { cpuSeconds } from "./lib/process-cpu.ts";

const recordsPerObject = Number(process.env.SVC_BENCH_CRM_RECORDS ?? 100_000);
const seconds = Number(process.env.SVC_BENCH_CRM_SECONDS ?? 5);
const stores = (process.env.SVC_BENCH_CRM_STORES ?? "sqlite,postgres").split(",") as Store[];
/** wrk's threads: two cores, shared with the server. */
const wrkThreads = 2;
/** Connections in flight: a few users at once, so p99 is a request's latency, not a queue's. */
const connections = 4;
/** Generous: a list on a loaded machine can take a while, and a timeout would fail the run. */
const wrkTimeoutSeconds = 10;
/** The seed of the generated records; each object adds its index so objects differ. */
const dataSeed = 8;

type Store = "sqlite" | "postgres";
const storeTitle: Record<Store, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

/** The hierarchy: [role, parent]. */
const roles: [string, string | null][] = [
  ["ceo", null],
  ["sales-vp", "ceo"],
  ["east-manager", "sales-vp"],
  ["west-manager", "sales-vp"],
  ["east-rep", "east-manager"],
  ["west-rep", "west-manager"],
  ["marketing", "ceo"],
  ["support", "ceo"],
];
/** Every non-admin user and their role; all of them own records. */
const users: [string, string][] = [
  ["vp", "sales-vp"],
  ["east-mgr", "east-manager"],
  ["west-mgr", "west-manager"],
  ...[1, 2, 3, 4].map((n): [string, string] => [`east-rep-${n}`, "east-rep"]),
  ...[1, 2, 3, 4].map((n): [string, string] => [`west-rep-${n}`, "west-rep"]),
  ["marketing-1", "marketing"],
  ["marketing-2", "marketing"],
  ["support-1", "support"],
  ["support-2", "support"],
];

/** One rule per object: each widens a rep's or manager's view a little. */
const sharingRules = [
  {
    object: "leads",
    name: "marketing leads to sales",
    access: "read",
    owned_by: { role: "marketing" },
    share_with: { role: "sales-vp", include_subordinates: true },
  },
  {
    object: "accounts",
    name: "tech accounts to east",
    access: "read",
    criteria: [{ field: "industry", op: "eq", value: "Technology" }],
    share_with: { role: "east-rep" },
  },
  { object: "contacts", name: "west contacts to east", access: "read", owned_by: { role: "west-rep" }, share_with: { role: "east-rep" } },
  {
    object: "opportunities",
    name: "big wins to sales",
    access: "read",
    criteria: [
      { field: "stage", op: "eq", value: "Closed Won" },
      { field: "amount", op: "gte", value: 150000 },
    ],
    share_with: { role: "sales-vp", include_subordinates: true },
  },
  {
    object: "cases",
    name: "high priority to east",
    access: "read_write",
    criteria: [{ field: "priority", op: "eq", value: "High" }],
    share_with: { role: "east-manager", include_subordinates: true },
  },
];

/** What the list runs ask: [object, q, user]. Terms match from under 1% to ~17% of the rows. */
const listQueries: [CrmObject, string, string][] = [
  ["leads", "", "east-rep-1"],
  ["leads", "smith", "east-rep-1"],
  ["leads", "ann smi", "east-rep-1"],
  ["accounts", "globex", "east-rep-1"],
  ["contacts", "garcia", "east-rep-1"],
  ["opportunities", "renewal", "east-rep-1"],
  ["cases", "password", "east-rep-1"],
  ["leads", "", "east-mgr"],
  ["leads", "smith", "east-mgr"],
];
const benchUsers = [...new Set(listQueries.map(([, , user]) => user))];
const creator = "east-rep-1";

const cond = (field: string, op: string, value?: unknown) => (value === undefined ? { field, op } : { field, op, value });

/** 5 validation rules, 2 workflow rules, 1 flow on opportunities: what a sales org might define. */
const validationRules = [
  { name: "AmountNotNegative", condition: cond("amount", "lt", 0), error_field: "amount", message: "Amount cannot be negative" },
  {
    name: "ProbabilityInRange",
    condition: { any: [cond("probability", "lt", 0), cond("probability", "gt", 100)] },
    error_field: "probability",
    message: "Probability is a percentage",
  },
  {
    name: "LostNeedsReason",
    condition: { all: [cond("stage", "eq", "Closed Lost"), cond("description", "blank")] },
    error_field: "description",
    message: "Say why the deal was lost",
  },
  { name: "CloseDateRecent", condition: cond("close_date", "lt", "2000-01-01"), error_field: "close_date", message: "Close date is too far in the past" },
  { name: "NoPlaceholderName", condition: cond("name", "in", ["test", "TBD", "n/a"]), error_field: "name", message: "Give the deal a real name" },
];
const workflowRules = [
  { name: "WonIsCertain", trigger: "created_and_edited", condition: cond("stage", "eq", "Closed Won"), updates: [{ field: "probability", value: 100 }] },
  {
    name: "LargeDealNote",
    trigger: "created",
    condition: cond("amount", "gte", 100000),
    updates: [{ field: "description", value: { template: "Large deal: {name}; pricing review needed" } }],
  },
];
const flow = {
  name: "ReviewLargeDeal",
  timing: "after_save",
  trigger: "created",
  entry: cond("amount", "gte", 150000),
  steps: [
    {
      type: "decision",
      branches: [
        {
          condition: cond("stage", "in", ["Proposal/Price Quote", "Negotiation/Review"]),
          steps: [
            {
              type: "create_record",
              object: "cases",
              values: { subject: { template: "Review pricing for {name}" }, account_id: { ref: "account_id" }, priority: "High", origin: "Web" },
            },
          ],
        },
      ],
    },
  ],
};

/** The create bodies, in rotation; `check` says what the rules must have done to the answer. */
function createBodies(accountId: number) {
  const base = { account_id: accountId, close_date: "2026-09-30" };
  return [
    { body: { ...base, name: "Acme Corp - Pilot", stage: "Prospecting", amount: 12000, probability: 10 }, check: (r: any) => r.description === null },
    { body: { ...base, name: "Acme Corp - Renewal", stage: "Closed Won", amount: 40000, probability: 90 }, check: (r: any) => r.probability === 100 },
    {
      body: { ...base, name: "Acme Corp - Upgrade", stage: "Qualification", amount: 120000, probability: 30 },
      check: (r: any) => /^Large deal/.test(r.description),
    },
    {
      body: { ...base, name: "Acme Corp - Expansion", stage: "Negotiation/Review", amount: 180000, probability: 70 },
      check: (r: any) => /^Large deal/.test(r.description),
    },
  ];
}

/** A set-up tool run, which must succeed: its trimmed output. */
const tool = (db: string, args: string[]) => must(runCrmTool(db, args));

/** A set-up request, which must succeed: the parsed answer. */
async function call(crm: CrmProcess, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await crm.call(token, method, path, body);
  if (reply.status < 200 || reply.status > 299) throw new Error(`${method} ${path} → ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

interface Measured extends WrkResult {
  cpu: number;
}

async function measure(crm: CrmProcess, script: string, scriptPath: string): Promise<Measured> {
  const pid = crm.pid;
  const cpuBefore = cpuSeconds(pid);
  const start = performance.now();
  const result = await wrk({ url: crm.url, script, scriptPath, threads: wrkThreads, connections, seconds, timeoutSeconds: wrkTimeoutSeconds });
  return { ...result, cpu: (cpuSeconds(pid) - cpuBefore) / ((performance.now() - start) / 1000) };
}

const luaString = (s: string) => JSON.stringify(s);

function listScript(token: string, path: string): string {
  return `
wrk.method = "GET"
wrk.path = ${luaString(path)}
wrk.headers["Authorization"] = ${luaString(`Bearer ${token}`)}
`;
}

function createScript(token: string, bodies: unknown[]): string {
  return `
wrk.headers["Authorization"] = ${luaString(`Bearer ${token}`)}
wrk.headers["Content-Type"] = "application/json"
local bodies = { ${bodies.map((b) => luaString(JSON.stringify(b))).join(", ")} }
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/opportunities", nil, bodies[(n % #bodies) + 1])
end
`;
}

const listPath = (object: CrmObject, q: string) => `/api/v1/${object}${q === "" ? "" : `?q=${encodeURIComponent(q)}`}`;

interface StoreResult {
  loadSeconds: Record<CrmObject, number>;
  lists: { visible: number; all: number; run: Measured }[];
  creates: Measured;
  createdCases: number;
}

async function benchStore(store: Store, dir: string, pg: () => Promise<PostgresServer>): Promise<StoreResult> {
  const sqlitePath = join(dir, "crm.db");
  const db = store === "sqlite" ? `sqlite:${sqlitePath}` : await (await pg()).createDatabase("crm_bench");
  await tool(db, ["user", "add", "--username", "admin", "--admin"]);
  const admin = await tool(db, ["token", "create", "--user", "admin"]);
  let crm = await startCrm(db);
  try {
    for (const [name, parent] of roles) await call(crm, admin, "POST", "/api/v1/settings/roles", parent === null ? { name } : { name, parent });
    for (const [username, role] of users) await call(crm, admin, "POST", "/api/v1/settings/users", { username, role });
    const ids = new Map<string, number>((await call(crm, admin, "GET", "/api/v1/settings/users")).data.map((u: any) => [u.username, u.id]));
    const tokens = new Map<string, string>();
    for (const user of [...benchUsers, creator]) if (!tokens.has(user)) tokens.set(user, await tool(db, ["token", "create", "--user", user]));
    await call(crm, admin, "PATCH", "/api/v1/settings/sharing/defaults", Object.fromEntries(crmObjects.map((o) => [o, "private"])));
    for (const rule of sharingRules) await call(crm, admin, "POST", "/api/v1/settings/sharing/rules", rule);

    const population = { owners: users.map(([u]) => ids.get(u)!), count: recordsPerObject };
    const loadSeconds = {} as Record<CrmObject, number>;
    for (const [i, object] of crmObjects.entries()) {
      const start = performance.now();
      if (store === "sqlite") await loadSqlite(sqlitePath, object, population, dataSeed + i);
      else await loadPostgres(db, object, population, dataSeed + i);
      loadSeconds[object] = (performance.now() - start) / 1000;
      console.error(`crm bench: ${store}: loaded ${fmt(recordsPerObject)} ${object} in ${loadSeconds[object].toFixed(1)} s`);
    }
    // A restart after the import, as a deployment would: nothing cached from the empty tables.
    await crm.stop();
    crm = await startCrm(db);

    const lists: StoreResult["lists"] = [];
    for (const [object, q, user] of listQueries) {
      const token = tokens.get(user)!;
      const path = listPath(object, q);
      const visible = (await call(crm, token, "GET", path)).total;
      const all = (await call(crm, admin, "GET", path)).total;
      const run = await measure(crm, listScript(token, path), join(dir, "list.lua"));
      lists.push({ visible, all, run });
      console.error(`crm bench: ${store}: ${path} as ${user}: ${fmt(run.requestsPerSec)} req/s`);
    }

    for (const kind of ["validation-rules", "workflow-rules"] as const) {
      for (const rule of kind === "validation-rules" ? validationRules : workflowRules) {
        await call(crm, admin, "POST", `/api/v1/settings/${kind}`, { object: "opportunities", ...rule });
      }
    }
    await call(crm, admin, "POST", "/api/v1/settings/flows", { object: "opportunities", ...flow });
    const creatorToken = tokens.get(creator)!;
    const own = (await call(crm, admin, "GET", "/api/v1/accounts?per=100")).data.find((a: any) => a.owner_id === ids.get(creator));
    if (own === undefined) throw new Error(`no account owned by ${creator} among the newest 100`);
    const bodies = createBodies(own.id);
    const casesBefore = (await call(crm, admin, "GET", "/api/v1/cases")).total;
    for (const { body, check } of bodies) {
      const record = await call(crm, creatorToken, "POST", "/api/v1/opportunities", body);
      if (!check(record)) throw new Error(`rules did not act as expected on ${JSON.stringify(body)}: got ${JSON.stringify(record)}`);
    }
    if ((await call(crm, admin, "GET", "/api/v1/cases")).total !== casesBefore + 1) throw new Error("the flow did not create exactly one case");
    const creates = await measure(
      crm,
      createScript(
        creatorToken,
        bodies.map((b) => b.body),
      ),
      join(dir, "create.lua"),
    );
    const createdCases = (await call(crm, admin, "GET", "/api/v1/cases")).total - casesBefore - 1;
    console.error(`crm bench: ${store}: creates ${fmt(creates.requestsPerSec)}/s`);
    return { loadSeconds, lists, creates, createdCases };
  } finally {
    await crm.stop();
  }
}

const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);
const pct = (cpu: number) => `${(cpu * 100).toFixed(0)}%`;

function printTables(results: Map<Store, StoreResult>): void {
  const cols = [...results.keys()];
  const first = results.get(cols[0]!)!;
  console.log(`### crm: ${fmt(recordsPerObject)} records per object, ${users.length} owners, private defaults + 1 sharing rule per object\n`);
  console.log("Bulk load (set-up, not measured by the API: prepared INSERTs on SQLite with the FTS5 triggers, COPY + ANALYZE on PostgreSQL), seconds:\n");
  console.log(`| object | ${cols.map((c) => storeTitle[c]).join(" | ")} |`);
  console.log(`|---|${cols.map(() => "---:").join("|")}|`);
  for (const object of crmObjects) console.log(`| ${object} | ${cols.map((c) => results.get(c)!.loadSeconds[object].toFixed(1)).join(" | ")} |`);

  console.log(`\n### crm: list with q and sharing, page of 20 newest first (wrk -t ${wrkThreads} -c ${connections} -d ${seconds}s)\n`);
  console.log("visible / all: the user's `total` against an admin's for the same request.\n");
  const heads = cols.flatMap((c) => [`${storeTitle[c]} req/s`, "p50 ms", "p99 ms", "CPU"]);
  console.log(`| object | q | as | visible / all | ${heads.join(" | ")} |`);
  console.log(`|---|---|---|---:|${heads.map(() => "---:").join("|")}|`);
  listQueries.forEach(([object, q, user], i) => {
    const counts = `${fmt(first.lists[i]!.visible)} / ${fmt(first.lists[i]!.all)}`;
    const cells = cols.flatMap((c) => {
      const r = results.get(c)!.lists[i]!.run;
      return [fmt(r.requestsPerSec), ms(r.p50Ms), ms(r.p99Ms), pct(r.cpu)];
    });
    console.log(`| ${object} | ${q === "" ? "(none)" : `\`${q}\``} | ${user} | ${counts} | ${cells.join(" | ")} |`);
  });

  console.log(
    `\n### crm: creates of opportunities with 5 validation rules, 2 workflow rules, 1 flow (wrk -t ${wrkThreads} -c ${connections} -d ${seconds}s)\n`,
  );
  console.log("Four valid bodies in rotation: 1 in 4 fires a workflow update of probability, 2 in 4 a description update, 1 in 4 the flow's related case.\n");
  console.log("| store | creates/s | p50 ms | p99 ms | server CPU | cases created by the flow |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const c of cols) {
    const r = results.get(c)!;
    console.log(
      `| ${storeTitle[c]} | ${fmt(r.creates.requestsPerSec)} | ${ms(r.creates.p50Ms)} | ${ms(r.creates.p99Ms)} | ${pct(r.creates.cpu)} | ${fmt(r.createdCases)} |`,
    );
  }
  console.log("");
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-crm-"));
  let postgres: Promise<PostgresServer> | undefined;
  try {
    const results = new Map<Store, StoreResult>();
    for (const store of stores) results.set(store, await benchStore(store, dir, () => (postgres ??= startPostgres())));
    printTables(results);
  } finally {
    if (postgres !== undefined) await (await postgres).stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
