/**
 * What a standalone server answers to the replication and cluster commands, as a Redis 7.0 with
 * no replicas and `cluster-enabled no` answers them — so that clients which ask (a Sentinel-aware
 * client's ROLE, a library probing for cluster mode, a WAIT for replicas, a tool's REPLICAOF NO
 * ONE or FAILOVER) get Redis's answers rather than "unknown command". svc kv does not replicate:
 * REPLICAOF of a master to follow is refused, and the replication protocol's own commands (SYNC,
 * PSYNC, REPLCONF) are not here.
 */
import { isKeyword, parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, syntaxError } from "../text/errors.ts";
import { type CommandFlag, type CommandSpec, type Exec, subcommandsOf } from "../kit/spec.ts";
import { portMax } from "../config/param-types.ts";

const clusterDisabled = () => new KvError("ERR This instance has cluster support disabled");

/** ROLE: a master with no replicas and replication offset 0. */
function role(x: Exec): void {
  x.reply.array(3);
  x.reply.bulk("master");
  x.reply.integer(0);
  x.reply.array(0);
}

/**
 * WAIT numreplicas timeout: how many replicas acknowledged the client's writes — none, there are
 * none. Asked for none (or fewer), it answers at once; asked for any, it waits out the timeout in
 * milliseconds (0: forever, as Redis does) and answers 0. Inside EXEC it cannot wait: 0 at once.
 */
function wait(x: Exec, argv: string[]): void {
  const wanted = parseInt64(argv[1]!);
  if (wanted === null) throw notAnInteger();
  const timeoutMs = parseInt64(argv[2]!);
  if (timeoutMs === null) throw new KvError("ERR timeout is not an integer or out of range");
  if (timeoutMs < 0n) throw new KvError("ERR timeout is negative");
  if (wanted <= 0n || !x.session.mayBlock) return x.reply.integer(0);
  const { session } = x;
  x.engine.blocking.block(session, {
    dbIndex: session.dbIndex,
    keys: [],
    deadlineMs: timeoutMs === 0n ? Infinity : x.engine.clock.nowMs() + Number(timeoutMs),
    tryServe: () => false,
    timeout: () => {
      session.reply.integer(0);
      session.transport?.flush();
    },
  });
}

/** REPLICAOF / SLAVEOF: NO ONE is a master staying one (OK); a master to follow is checked as Redis checks it, then refused. */
function replicaof(x: Exec, argv: string[]): void {
  if (isKeyword(argv[1]!, "NO") && isKeyword(argv[2]!, "ONE")) return x.reply.simple("OK");
  const port = parseInt64(argv[2]!);
  if (port === null || port < 0n || port > portMax) throw new KvError("ERR Invalid master port");
  throw new KvError("ERR svc kv does not replicate: it is always a master (REPLICAOF NO ONE is the form it takes)");
}

/**
 * FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | ABORT: its arguments checked as Redis 7.0 checks
 * them, in its order; then, with no replica to hand over to, Redis's refusal.
 */
function failover(_x: Exec, argv: string[]): void {
  if (argv.length === 2 && isKeyword(argv[1]!, "ABORT")) throw new KvError("ERR No failover in progress.");
  let timeoutGiven = false;
  let hostGiven = false;
  let force = false;
  for (let j = 1; j < argv.length; j++) {
    if (isKeyword(argv[j]!, "TIMEOUT") && j + 1 < argv.length && !timeoutGiven) {
      const timeoutMs = parseInt64(argv[++j]!);
      if (timeoutMs === null) throw notAnInteger();
      if (timeoutMs <= 0n) throw new KvError("ERR FAILOVER timeout must be greater than 0");
      timeoutGiven = true;
    } else if (isKeyword(argv[j]!, "TO") && j + 2 < argv.length && !hostGiven) {
      if (parseInt64(argv[j + 2]!) === null) throw notAnInteger();
      hostGiven = true;
      j += 2;
    } else if (isKeyword(argv[j]!, "FORCE") && !force) force = true;
    else throw syntaxError();
  }
  throw new KvError("ERR FAILOVER requires connected replicas.");
}

/**
 * CLUSTER's subcommands as Redis 7.0 declares them: arity and flags (in the order of Redis's flag
 * bits, as COMMAND INFO lists them), so that a wrong arity, a script calling CLUSTER RESET
 * (noscript) and ACL's categories are answered as Redis answers them, before the refusal each of
 * them then gets. An unknown subcommand is unknown (the table's lookup).
 */
const clusterSubcommandShapes: readonly [name: string, arity: number, flags: readonly CommandFlag[]][] = [
  ["addslots", -3, ["admin", "stale", "no_async_loading"]],
  ["addslotsrange", -4, ["admin", "stale", "no_async_loading"]],
  ["bumpepoch", 2, ["admin", "stale", "no_async_loading"]],
  ["count-failure-reports", 3, ["admin", "stale"]],
  ["countkeysinslot", 3, ["stale"]],
  ["delslots", -3, ["admin", "stale", "no_async_loading"]],
  ["delslotsrange", -4, ["admin", "stale", "no_async_loading"]],
  ["failover", -2, ["admin", "stale", "no_async_loading"]],
  ["flushslots", 2, ["admin", "stale", "no_async_loading"]],
  ["forget", 3, ["admin", "stale", "no_async_loading"]],
  ["getkeysinslot", 4, ["stale"]],
  ["help", 2, ["loading", "stale"]],
  ["info", 2, ["stale"]],
  ["keyslot", 3, ["stale"]],
  ["links", 2, ["stale"]],
  ["meet", -4, ["admin", "stale", "no_async_loading"]],
  ["myid", 2, ["stale"]],
  ["nodes", 2, ["stale"]],
  ["replicas", 3, ["admin", "stale"]],
  ["replicate", 3, ["admin", "stale", "no_async_loading"]],
  ["reset", -2, ["admin", "stale", "noscript"]],
  ["saveconfig", 2, ["admin", "stale", "no_async_loading"]],
  ["set-config-epoch", 3, ["admin", "stale", "no_async_loading"]],
  ["setslot", -4, ["admin", "stale", "no_async_loading"]],
  ["shards", 2, ["stale"]],
  ["slaves", 3, ["admin", "stale"]],
  ["slots", 2, ["stale"]],
];

const refuseInStandalone = (): void => {
  throw clusterDisabled();
};

export const standaloneCommands: readonly CommandSpec[] = [
  {
    name: "role",
    arity: 1,
    flags: ["noscript", "loading", "stale", "fast"],
    group: "server",
    summary: "Returns the replication role: master, with no replicas.",
    run: role,
  },
  { name: "wait", arity: 3, flags: ["noscript"], group: "generic", summary: "Waits for replicas to acknowledge writes (there are none).", run: wait },
  {
    name: "replicaof",
    arity: 3,
    flags: ["admin", "noscript", "stale", "no_async_loading"],
    group: "server",
    summary: "NO ONE: stays a master; svc does not follow another.",
    run: replicaof,
  },
  { name: "slaveof", arity: 3, flags: ["admin", "noscript", "stale", "no_async_loading"], group: "server", summary: "REPLICAOF's old name.", run: replicaof },
  {
    name: "failover",
    arity: -1,
    flags: ["admin", "noscript", "stale"],
    group: "server",
    summary: "Refused: there is no replica to hand over to.",
    run: failover,
  },
  {
    name: "cluster",
    arity: -2,
    flags: [],
    group: "cluster",
    summary: "Cluster commands: refused, as cluster mode is off.",
    subcommands: clusterSubcommandShapes.map(([name, arity, flags]) =>
      subcommandsOf("cluster", "cluster")(name, arity, "Refused: cluster mode is off.", refuseInStandalone, flags),
    ),
  },
  { name: "readonly", arity: 1, flags: ["loading", "stale", "fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
  { name: "readwrite", arity: 1, flags: ["loading", "stale", "fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
  { name: "asking", arity: 1, flags: ["fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
];
