/**
 * Introspection's generated steps on three clients — A and C speak RESP2, B RESP3: CLIENT
 * SETNAME/GETNAME/ID/INFO/LIST (with TYPE and ID filters)/KILL (old and new forms, filters that
 * match and ones that do not, bad ones)/NO-EVICT/UNPAUSE/UNBLOCK (of a client blocked in BLPOP,
 * with TIMEOUT and ERROR), INFO's sections, COMMAND COUNT/LIST/INFO/DOCS/GETKEYS, OBJECT, DEBUG's
 * subcommands both servers have, MEMORY USAGE, with wrong arities and bad arguments throughout.
 *
 * What is normalised, and why: client ids and addresses become the client's name (they are the
 * server's to choose); CLIENT LIST/INFO keep only the fields that say what a client is and does
 * (name, flags, db, subscriptions, multi, cmd, user, redir, resp) — fd, age, idle, buffer sizes
 * and memory are the server's own (test/kv/commands/client-list.test.ts compares the buffer counts); INFO
 * is compared by its field names, section by section (values are times, memory, counters of this
 * process); MEMORY USAGE's number is svc's own estimate (docs/kv.md), so only its type is
 * compared; OBJECT IDLETIME is a time, compared as a non-negative integer; HELP texts are prose.
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, keyspaceLines, lit, type Names, type Step, textOf } from "../duet.ts";
import { type RespValue, show } from "../resp-client.ts";

const other = fc.constantFrom("A", "B", "C");
const name = fc.constantFrom("worker", "", "has space", "x\ny", "ok-name");
const key = fc.constantFrom("s", "l", "h", "missing");

const clientCommands = fc.oneof(
  cmd(lit("CLIENT"), lit("SETNAME"), name),
  fc.constantFrom<string[]>(
    ["CLIENT", "GETNAME"],
    ["CLIENT", "ID"],
    ["CLIENT", "INFO"],
    ["CLIENT", "LIST"],
    ["CLIENT", "GETNAME", "x"],
    ["CLIENT", "SETNAME"],
    ["CLIENT", "ID", "x"],
  ),
  cmd(
    lit("CLIENT"),
    lit("LIST"),
    fc.constantFrom<string[]>(
      ["TYPE", "normal"],
      ["TYPE", "pubsub"],
      ["TYPE", "master"],
      ["TYPE", "replica"],
      ["TYPE", "bad"],
      ["ID"],
      ["ID", "abc"],
      ["ID", "0"],
      ["FOO"],
    ),
  ),
  cmd(lit("CLIENT"), lit("LIST"), lit("ID"), fc.array(fc.constantFrom("<id:A>", "<id:B>", "<id:C>", "999999"), { minLength: 1, maxLength: 3 })),
  cmd(
    lit("CLIENT"),
    lit("KILL"),
    fc.constantFrom<string[]>(
      ["ID", "<id:C>"],
      ["ID", "999999"],
      ["ID", "abc"],
      ["ID", "<id:A>"],
      ["ID", "<id:A>", "SKIPME", "no"],
      ["ID", "<id:C>", "SKIPME", "maybe"],
      ["TYPE", "pubsub"],
      ["TYPE", "master"],
      ["TYPE", "bad"],
      ["ADDR", "<addr:C>"],
      ["ADDR", "1.2.3.4:5"],
      ["<addr:C>"],
      ["1.2.3.4:5"],
      ["FOO", "bar"],
      ["ID"],
      ["MAXAGE", "100000"],
      ["USER", "nosuchuser"],
    ),
  ),
  cmd(lit("CLIENT"), lit("NO-EVICT"), fc.constantFrom("on", "off", "ON", "maybe")),
  fc.constantFrom<string[]>(
    ["CLIENT", "UNPAUSE"],
    ["CLIENT", "PAUSE", "abc"],
    ["CLIENT", "PAUSE", "-1"],
    ["CLIENT", "PAUSE", "100", "BAD"],
    ["CLIENT", "PAUSE"],
    ["CLIENT", "NOSUCH"],
    ["CLIENT"],
  ),
  cmd(
    lit("CLIENT"),
    lit("UNBLOCK"),
    fc.constantFrom("<id:C>", "<id:A>", "999999", "abc"),
    fc.constantFrom<string[]>([], ["TIMEOUT"], ["ERROR"], ["error"], ["BAD"]),
  ),
);
const infoCommands = cmd(
  lit("INFO"),
  fc.constantFrom<string[]>(
    [],
    ["server"],
    ["clients"],
    ["memory"],
    ["persistence"],
    ["stats"],
    ["replication"],
    ["cpu"],
    ["keyspace"],
    ["errorstats"],
    ["modules"],
    ["commandstats"],
    ["default"],
    ["everything"],
    ["all"],
    ["nosuch"],
    ["CLIENTS", "memory"],
    ["latencystats"],
  ),
);
const commandCommands = fc.constantFrom<string[]>(
  ["COMMAND", "COUNT"],
  ["COMMAND", "INFO", "get", "set", "nosuch"],
  ["COMMAND", "INFO", "client", "xinfo"],
  ["COMMAND", "DOCS", "nosuch"],
  ["COMMAND", "DOCS", "get"],
  ["COMMAND", "GETKEYS", "set", "a", "b"],
  ["COMMAND", "GETKEYS", "get"],
  ["COMMAND", "GETKEYS", "nosuch", "a"],
  ["COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog"],
  ["COMMAND", "LIST", "FILTERBY", "PATTERN", "xa*"],
  ["COMMAND", "LIST", "FILTERBY", "BAD", "x"],
  ["COMMAND", "LIST", "FILTERBY"],
  ["COMMAND", "NOSUCH"],
  ["COMMAND", "COUNT", "x"],
  ["COMMAND", "GETKEYSANDFLAGS", "lmove", "a", "b", "LEFT", "RIGHT"],
);
const objectCommands = fc.oneof(
  cmd(lit("OBJECT"), fc.constantFrom("ENCODING", "REFCOUNT", "IDLETIME", "FREQ", "encoding"), key),
  fc.constantFrom<string[]>(["OBJECT"], ["OBJECT", "ENCODING"], ["OBJECT", "NOSUCH", "s"], ["OBJECT", "ENCODING", "s", "extra"]),
  cmd(lit("MEMORY"), lit("USAGE"), key, fc.constantFrom<string[]>([], ["SAMPLES", "0"], ["SAMPLES", "-1"], ["SAMPLES", "x"], ["FOO", "1"], ["SAMPLES"])),
  fc.constantFrom<string[]>(
    ["MEMORY"],
    ["MEMORY", "NOSUCH"],
    ["MEMORY", "USAGE"],
    ["DEBUG", "SLEEP", "0"],
    ["DEBUG", "SET-ACTIVE-EXPIRE", "1"],
    ["DEBUG", "SLEEP"],
    ["DEBUG", "NOSUCH"],
  ),
);
const data = fc.constantFrom<string[]>(
  ["SET", "s", "v"],
  ["SET", "s", "12"],
  ["RPUSH", "l", "a"],
  ["HSET", "h", "f", "v"],
  ["DEL", "s"],
  ["SUBSCRIBE", "ch"],
  ["UNSUBSCRIBE"],
  ["SELECT", "1"],
  ["SELECT", "0"],
  ["MULTI"],
  ["EXEC"],
);
/** C blocks (BLPOP on an empty key) for UNBLOCK and KILL to find; A's push releases it. */
const blocking = fc.constantFrom<Step[]>([{ client: "C", argv: ["BLPOP", "empty", "0"] }], [{ client: "A", argv: ["RPUSH", "empty", "x"] }]);

export const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: by(other, clientCommands).map((s) => [s]) },
      { weight: 2, arbitrary: by(other, infoCommands).map((s) => [s]) },
      { weight: 2, arbitrary: by(other, commandCommands).map((s) => [s]) },
      { weight: 3, arbitrary: by(other, objectCommands).map((s) => [s]) },
      { weight: 3, arbitrary: by(other, data).map((s) => [s]) },
      { weight: 2, arbitrary: blocking },
    ),
    { minLength: 1, maxLength: 20 },
  )
  .map((parts) => parts.flat());

/** The CLIENT LIST/INFO fields compared: what a client is and does, not the server's own numbers. */
const clientFields = ["id", "addr", "name", "flags", "db", "sub", "psub", "ssub", "multi", "cmd", "user", "redir", "resp"];

/** CLIENT LIST or INFO text as the named clients' lines, with only the compared fields. */
export function clientLines(text: string, names: Names): string {
  return names
    .text(text)
    .split("\n")
    .filter((l) => l.startsWith("id=<"))
    .map((l) =>
      l
        .split(" ")
        .filter((f) => clientFields.includes(f.slice(0, f.indexOf("="))))
        .join(" "),
    )
    .join("\n");
}

/**
 * INFO fields one server shows and the other does not, by configuration or by design: svc's own
 * (its runtime, and 7.2's pubsub_clients: docs/kv.md), and those Redis adds to Persistence only
 * while the append-only file is on — as it is in the svc under test, not in the redis-server.
 */
const svcOnlyInfoFields = new Set([
  "svc_runtime",
  "pubsub_clients",
  "aof_current_size",
  "aof_base_size",
  "aof_pending_rewrite",
  "aof_buffer_length",
  "aof_pending_bio_fsync",
  "aof_delayed_fsync",
]);
/** Sections listing commands or errors met so far, in Redis's hash-table order: compared sorted. */
const unorderedSections = new Set(["# Commandstats", "# Errorstats", "# Latencystats"]);

/** INFO as its sections' field names (values are this process's). */
function infoFields(text: string): string {
  const out: string[] = [];
  let section: string[] = [];
  let unordered = false;
  const flush = () => out.push(...(unordered ? section.sort() : section));
  for (const line of text.split("\r\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      flush();
      out.push(line);
      section = [];
      unordered = unorderedSections.has(line);
      continue;
    }
    const field = line.slice(0, line.indexOf(":"));
    if (!svcOnlyInfoFields.has(field)) section.push(field);
  }
  flush();
  return out.join(",");
}

/**
 * COMMAND INFO's entries without their tips and key specifications (svc's are empty: docs/kv.md,
 * known weak spots), subcommands sorted (Redis lists them in hash-table order).
 */
function commandInfo(reply: RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  return reply.map((entry) => {
    if (!Array.isArray(entry)) return entry;
    const subs = entry[9];
    const sorted = Array.isArray(subs) ? commandInfo([...subs].sort((a, b) => show(a).localeCompare(show(b)))) : subs!;
    return [...entry.slice(0, 7), "<tips>", "<key specs>", sorted];
  });
}

const isError = (v: RespValue) => v !== null && typeof v === "object" && "e" in v;

function normalise(argv: string[], reply: RespValue, names: Names): RespValue {
  const [a, b] = [argv[0]!.toUpperCase(), (argv[1] ?? "").toUpperCase()];
  if (isError(reply)) return reply;
  if (a === "CLIENT" && b === "ID" && typeof reply === "bigint") return names.id(reply);
  if (a === "CLIENT" && (b === "LIST" || b === "INFO")) return clientLines(textOf(reply), names);
  if (a === "INFO") return infoFields(textOf(reply));
  // The command tables differ by design: svc has the Bloom filter commands (as module bf) and
  // none of cluster, replication, MODULE, MIGRATE or LOLWUT (docs/kv.md).
  if (a === "COMMAND" && b === "COUNT" && typeof reply === "bigint") return "<count>";
  if (a === "COMMAND" && b === "INFO") return commandInfo(reply);
  // COMMAND DOCS: svc gives a summary and a group, not Redis's argument trees (docs/kv.md).
  if (a === "COMMAND" && b === "DOCS" && argv.length > 2 && argv[2] !== "nosuch") return "<docs>";
  // COMMAND LIST walks a hash table.
  if (a === "COMMAND" && b === "LIST" && Array.isArray(reply)) return [...reply].sort((x, y) => show(x).localeCompare(show(y)));
  if (a === "MEMORY" && b === "USAGE") return typeof reply === "bigint" ? "<bytes>" : reply;
  if (a === "OBJECT" && b === "IDLETIME") return typeof reply === "bigint" && reply >= 0n ? "<idle>" : reply;
  if (b === "HELP") return "<help text>";
  return reply;
}

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 3 },
    { name: "C", protocol: 2 },
  ],
  reset: [
    ["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
    ["CONFIG", "RESETSTAT"],
  ],
  mayBlock: (argv) => argv[0] === "BLPOP",
  normalise,
  snapshot: async (c, names) => [...clientLines((await c.call("CLIENT", "LIST")) as string, names).split("\n"), ...(await keyspaceLines(c))],
};
