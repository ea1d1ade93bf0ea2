/**
 * What a standalone server answers to the replication and cluster commands, as a Redis 7.0 with
 * no replicas and `cluster-enabled no` answers them — so that clients which ask (a Sentinel-aware
 * client's ROLE, a library probing for cluster mode, a WAIT for replicas) get Redis's answers
 * rather than "unknown command".
 */
import { parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger } from "../text/errors.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";

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

/** CLUSTER with a subcommand Redis knows: refused, as cluster mode is off; any other: unknown. */
export const clusterSubcommands: ReadonlySet<string> = new Set([
  "addslots",
  "addslotsrange",
  "bumpepoch",
  "count-failure-reports",
  "countkeysinslot",
  "delslots",
  "delslotsrange",
  "failover",
  "flushslots",
  "forget",
  "getkeysinslot",
  "help",
  "info",
  "keyslot",
  "links",
  "meet",
  "myid",
  "nodes",
  "replicas",
  "replicate",
  "reset",
  "saveconfig",
  "set-config-epoch",
  "setslot",
  "shards",
  "slaves",
  "slots",
]);

function cluster(_x: Exec, argv: string[]): void {
  const sub = argv[1]!;
  if (!clusterSubcommands.has(sub.toLowerCase())) throw new KvError(`ERR unknown subcommand '${sub.slice(0, 128)}'. Try CLUSTER HELP.`);
  throw clusterDisabled();
}

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
  { name: "cluster", arity: -2, flags: [], group: "cluster", summary: "Cluster commands: refused, as cluster mode is off.", run: cluster },
  { name: "readonly", arity: 1, flags: ["loading", "stale", "fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
  { name: "readwrite", arity: 1, flags: ["loading", "stale", "fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
  { name: "asking", arity: 1, flags: ["fast"], group: "cluster", summary: "Refused: cluster mode is off.", run: refuseInStandalone },
];
