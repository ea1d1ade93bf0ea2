/**
 * Server commands: COMMAND, INFO, DBSIZE, FLUSHDB, FLUSHALL, CONFIG, TIME, MEMORY, SLOWLOG, DEBUG, FUNCTION.
 */
import { mallocStats, memoryDoctor, memoryStats, replyMemoryStats } from "../observe/memory-stats.ts";
import { isKeyword, parseFloatArg, parseInt64 } from "../text/args.ts";
import { arityError, KvError, notAnInteger, subcommandSyntaxError, syntaxError } from "../text/errors.ts";
import { redisCompatibleVersion } from "../server/version.ts";
import { globMatch } from "../text/glob.ts";
import { infoText } from "../observe/info.ts";
import { keyMemoryBytes, parseMemoryUsageSamples } from "../keyspace/memory-usage.ts";
import { helpReply } from "../kit/help.ts";
import { canonicalConfigValue, ConfigApplyError, configParamsByName } from "../config/config-table.ts";
import { aclCategories } from "../kit/acl-categories.ts";
import { hasKeys, keysWithFlags } from "../kit/key-specs.ts";
import { keyFlagOrder } from "../kit/key-specs-table.ts";
import { writeValue } from "../rdb/value-writer.ts";
import { encodingOf, refcountOf } from "../types/encoding.ts";
import { type CommandSpec, commandOrSubcommand, type Exec, helpFlags, subcommandsOf } from "../kit/spec.ts";

/**
 * COMMAND's ten-field description of one command (Redis 7 layout). Flags, categories, tips and
 * key specifications are sets in RESP3, and so are no subcommands; subcommands are an array.
 */
function describe(x: Exec, spec: CommandSpec): void {
  const r = x.reply;
  const [first, last, step] = spec.keys ?? [0, 0, 0];
  r.array(10);
  r.bulk(spec.name);
  r.integer(spec.arity);
  r.set(spec.flags.length);
  for (const f of spec.flags) r.simple(f);
  r.integer(first);
  r.integer(last);
  r.integer(step);
  const categories = aclCategories(spec);
  r.set(categories.length);
  for (const category of categories) r.simple(`@${category}`);
  r.set(0);
  r.set(0);
  const subs = spec.subcommands ?? [];
  if (subs.length === 0) r.set(0);
  else r.array(subs.length);
  for (const sub of subs) describe(x, sub);
}

/** One command's COMMAND DOCS entry: its name, then a map (RESP3) of its fields; subcommands a map too. */
function docs(x: Exec, spec: CommandSpec): void {
  const r = x.reply;
  r.bulk(spec.name);
  const subs = spec.subcommands ?? [];
  r.map(subs.length > 0 ? 4 : 3);
  r.bulk("summary");
  r.bulk(spec.summary);
  r.bulk("since");
  r.bulk("1.0.0");
  r.bulk("group");
  r.bulk(spec.group);
  if (subs.length > 0) {
    r.bulk("subcommands");
    r.map(subs.length);
    for (const sub of subs) docs(x, sub);
  }
}

/** A subcommand of COMMAND, run by `command` as the container is. */
function commandSub(name: string, arity: number, summary: string): CommandSpec {
  return { name: `command|${name}`, arity, flags: ["loading", "stale"], group: "server", summary, run: command };
}

function command(x: Exec, argv: string[]): void {
  const table = x.engine.commands;
  const sub = (argv[1] ?? "").toLowerCase();
  const named = (names: string[]) => names.map((name) => commandOrSubcommand(table, name));
  if (argv.length === 1) {
    x.reply.array(table.size);
    for (const spec of table.values()) describe(x, spec);
  } else if (sub === "count") x.reply.integer(table.size);
  else if (sub === "info") {
    const specs = argv.length > 2 ? named(argv.slice(2)) : [...table.values()];
    x.reply.array(specs.length);
    // An unknown name is a null (Redis's addReplyNull: `$-1` in RESP2), not a null array.
    for (const spec of specs) spec === undefined ? x.reply.bulk(null) : describe(x, spec);
  } else if (sub === "docs") {
    const specs = (argv.length > 2 ? named(argv.slice(2)) : [...table.values()]).filter((s) => s !== undefined);
    x.reply.map(specs.length);
    for (const spec of specs) docs(x, spec);
  } else if (sub === "list") commandList(x, argv);
  else if (sub === "getkeys" || sub === "getkeysandflags") getkeys(x, argv, sub === "getkeysandflags");
  else if (sub === "help") {
    helpReply(x, "COMMAND", [
      "(no subcommand)",
      "COUNT",
      "INFO [<command-name> ...]",
      "DOCS [<command-name> ...]",
      "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
      "GETKEYS <full-command>",
      "GETKEYSANDFLAGS <full-command>",
    ]);
  } else throw new KvError(`ERR unknown subcommand '${argv[1]!.slice(0, 128)}'. Try COMMAND HELP.`);
}

/** The module svc's Bloom filter commands stand for: RedisBloom registers as "bf". */
const bloomModuleName = "bf";

/**
 * COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob]: every command's name and
 * every subcommand's "container|sub", as Redis 7.0 lists them, or those of a module, of an ACL
 * category (either case, no "@"), or matching a pattern (any case).
 */
function commandList(x: Exec, argv: string[]): void {
  let keep: (spec: CommandSpec) => boolean = () => true;
  if (argv.length === 5 && argv[2]!.toUpperCase() === "FILTERBY") {
    const by = argv[3]!.toUpperCase();
    const value = argv[4]!;
    if (by === "MODULE") keep = (spec) => spec.group === "module" && value.toLowerCase() === bloomModuleName;
    else if (by === "ACLCAT") keep = (spec) => aclCategories(spec).includes(value.toLowerCase());
    else if (by === "PATTERN") keep = (spec) => globMatch(value, spec.name, true);
    else throw syntaxError();
  } else if (argv.length !== 2) throw syntaxError();
  const names: string[] = [];
  for (const spec of x.engine.commands.values()) {
    for (const s of [spec, ...(spec.subcommands ?? [])]) if (keep(s)) names.push(s.name);
  }
  x.reply.array(names.length);
  for (const name of names) x.reply.bulk(name);
}

/**
 * COMMAND GETKEYS and GETKEYSANDFLAGS cmd args...: the keys that command would touch (with how it
 * uses each), found and checked as Redis 7.0 finds and checks them (key-specs.ts).
 */
function getkeys(x: Exec, argv: string[], withFlags: boolean): void {
  if (argv.length < 4) throw arityError(withFlags ? "command|getkeysandflags" : "command|getkeys");
  const target = argv.slice(2);
  let spec = x.engine.commands.get(target[0]!.toLowerCase());
  if (spec?.subcommands !== undefined && target.length > 1) {
    const name = `${spec.name}|${target[1]!.toLowerCase()}`;
    spec = spec.subcommands.find((s) => s.name === name);
  }
  if (spec === undefined) throw new KvError("ERR Invalid command specified");
  if (!hasKeys(spec)) throw new KvError("ERR The command has no key arguments");
  if ((spec.arity > 0 && spec.arity !== target.length) || target.length < -spec.arity)
    throw new KvError("ERR Invalid number of arguments specified for command");
  const keys = keysWithFlags(spec, target);
  if (keys.length === 0 && !spec.flags.includes("no_mandatory_keys")) throw new KvError("ERR Invalid arguments specified for command");
  x.reply.array(keys.length);
  for (const { at, flags } of keys) {
    if (!withFlags) {
      x.reply.bulk(target[at]!);
      continue;
    }
    x.reply.array(2);
    x.reply.bulk(target[at]!);
    const named = keyFlagOrder.filter((flag) => flags.includes(flag));
    x.reply.set(named.length);
    for (const flag of named) x.reply.simple(flag);
  }
}

/** FLUSHDB's and FLUSHALL's [ASYNC|SYNC]: whether the flush is lazy (ASYNC, or neither under lazyfree-lazy-user-flush). */
function flushIsLazy(x: Exec, argv: string[]): boolean {
  if (argv.length > 2 || (argv.length === 2 && !["ASYNC", "SYNC"].includes(argv[1]!.toUpperCase()))) throw syntaxError();
  if (argv.length === 2) return argv[1]!.toUpperCase() === "ASYNC";
  return x.engine.config.get("lazyfree-lazy-user-flush")?.toLowerCase() === "yes";
}

function config(x: Exec, argv: string[]): void {
  const sub = argv[1]!.toLowerCase();
  const params = x.engine.config;
  if (sub === "get") {
    const found = new Map<string, string>();
    for (let i = 2; i < argv.length; i++) {
      const pattern = argv[i]!.toLowerCase();
      // A name without a glob character is looked up as it is — a hidden test parameter too, which
      // no pattern shows — and answered under the name as typed, as in Redis.
      if (!/[[*?]/.test(pattern)) {
        const value = params.get(pattern);
        if (value !== undefined) found.set(argv[i]!, value);
        continue;
      }
      for (const [name, value] of params) if (!configParamsByName.get(name)?.hidden && globMatch(pattern, name, true)) found.set(name, value);
    }
    x.reply.map(found.size);
    for (const [name, value] of found) {
      x.reply.bulk(name);
      x.reply.bulk(value);
    }
  } else if (sub === "set") {
    // The command table's arity lets in 4 arguments or more; an odd count is Redis's syntax error.
    if (argv.length % 2 !== 0) throw syntaxError();
    // All or nothing, as in Redis: every name, then every value, is checked before any is applied.
    // Errors name a parameter as the client wrote it.
    const sent = argv.filter((_, i) => i >= 2 && i % 2 === 0);
    const names = sent.map((name) => name.toLowerCase());
    const unknown = names.findIndex((name) => !configParamsByName.has(name));
    if (unknown !== -1) throw new KvError(`ERR Unknown option or number of arguments for CONFIG SET - '${sent[unknown]}'`);
    const changes: [string, string][] = [];
    names.forEach((name, i) => {
      if (names.indexOf(name) < i) throw new KvError(`ERR CONFIG SET failed (possibly related to argument '${sent[i]}') - duplicate parameter`);
      changes.push([name, canonicalConfigValue(name, argv[3 + i * 2]!, x.engine.config.get(name))]);
    });
    const before = changes.map(([name]) => [name, x.engine.config.get(name)] as const);
    for (let i = 0; i < changes.length; i++) {
      try {
        x.engine.setConfig(...changes[i]!);
      } catch (error) {
        if (!(error instanceof ConfigApplyError)) throw error;
        // One value could not be applied: every parameter of the call, those applied already
        // among them, goes back to what it was, as Redis rolls back.
        for (const [name, value] of before) if (value !== undefined) x.engine.setConfig(name, value);
        throw new KvError(`ERR CONFIG SET failed (possibly related to argument '${sent[i]}') - ${error.message}`);
      }
    }
    x.reply.simple("OK");
  } else if (sub === "resetstat") {
    x.engine.stats.reset();
    x.reply.simple("OK");
  } else if (sub === "rewrite") {
    // svc's configuration lives in its flags: there is no file to write CONFIG SET's changes to,
    // which is what Redis answers when started without one.
    throw new KvError("ERR The server is running without a config file");
  } else helpReply(x, "CONFIG", ["GET <pattern>", "SET <directive> <value>", "RESETSTAT", "REWRITE"]);
}

/** Redis's LRU clock: seconds, in 24 bits (DEBUG OBJECT's lru). */
const lruClockMask = 0xff_ffff;

/**
 * DEBUG OBJECT key, as Redis 7.0 words it: the encoding OBJECT ENCODING reports, the length of the
 * value in RDB form (svc's own RDB form, DUMP's), the LRU clock of its last access and the seconds
 * since. There is no address to show ("Value at:0x0"), and a list is no quicklist here, so its
 * ql_* fields are left out.
 */
function debugObject(x: Exec, key: string): void {
  const value = x.db.get(key);
  if (value === undefined) throw new KvError("ERR no such key");
  const bytes = writeValue(value);
  const idleSeconds = Math.floor(x.db.idleMs(key) / 1000);
  const lru = (Math.floor(Date.now() / 1000) - idleSeconds) & lruClockMask;
  x.reply.simple(
    `Value at:0x0 refcount:${refcountOf(value)} encoding:${encodingOf(value)} serializedlength:${bytes === null ? 0 : bytes.length - 1} lru:${lru} lru_seconds_idle:${idleSeconds}`,
  );
}

/**
 * DEBUG SLEEP sleeps the whole server, as Redis's does (tests use it to provoke timeouts); DEBUG
 * SET-ACTIVE-EXPIRE 0 stops the active expiry cycle, so that an expired key stays until a command
 * meets it (tests comparing servers use it to take the cycle's timing out), and 1 restarts it;
 * DEBUG OBJECT describes a key's value (debugObject).
 */
function debug(x: Exec, argv: string[]): void {
  const sub = argv[1]!.toLowerCase();
  if (sub === "object" && argv.length === 3) return debugObject(x, argv[2]!);
  if (sub === "sleep" && argv.length === 3) {
    const seconds = parseFloatArg(argv[2]!);
    if (seconds > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
  } else if (sub === "set-active-expire" && argv.length === 3) {
    // Redis reads the flag with atoi: any text not starting with a non-zero number turns it off.
    x.engine.activeExpire = Boolean(Number.parseInt(argv[2]!, 10));
  } else throw subcommandSyntaxError("DEBUG", argv[1]!);
  x.reply.simple("OK");
}

/** A subcommand; administrative (CONFIG, SLOWLOG) unless `flags` says otherwise (MEMORY, FUNCTION). */
const sub = (container: string, name: string, arity: number, summary: string, run: CommandSpec["run"], flags?: CommandSpec["flags"]): CommandSpec =>
  subcommandsOf(container)(name, arity, summary, run, flags);

/** SLOWLOG's subcommands other than HELP: administrative, and no noscript as Redis flags them. */
const slowlogFlags: CommandSpec["flags"] = ["admin", "loading", "stale"];

/** Entries SLOWLOG GET returns when not told how many. */
const slowlogGetCountDefault = 10;

function slowlogGet(x: Exec, argv: string[]): void {
  if (argv.length > 3) throw subcommandSyntaxError("SLOWLOG", argv[1]!);
  let count = slowlogGetCountDefault;
  if (argv.length === 3) {
    const n = parseInt64(argv[2]!);
    if (n === null || n < -1n) throw new KvError("ERR count should be greater than or equal to -1");
    count = n > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(n);
  }
  const entries = x.engine.slowlog.newest(count);
  x.reply.array(entries.length);
  for (const entry of entries) {
    x.reply.array(6);
    x.reply.integer(entry.id);
    x.reply.integer(entry.unixSeconds);
    x.reply.integer(entry.micros);
    x.reply.array(entry.args.length);
    for (const arg of entry.args) x.reply.bulk(arg);
    x.reply.bulk(entry.peer);
    x.reply.bulk(entry.clientName);
  }
}

export const serverCommands: readonly CommandSpec[] = [
  {
    // A container whose name alone runs too (every command described), as in Redis 7.0.
    name: "command",
    arity: -1,
    flags: ["loading", "stale"],
    group: "server",
    summary: "Describes the commands.",
    run: command,
    subcommands: [
      commandSub("count", 2, "Counts the commands."),
      commandSub("docs", -2, "Documents commands."),
      commandSub("getkeys", -4, "Names the keys of a command."),
      commandSub("getkeysandflags", -4, "Names the keys of a command and how it uses each."),
      commandSub("help", 2, "Shows COMMAND's subcommands."),
      commandSub("info", -2, "Describes commands."),
      commandSub("list", -2, "Lists the commands' names."),
    ],
  },
  {
    name: "info",
    arity: -1,
    flags: ["loading", "stale"],
    group: "server",
    summary: "Returns information and statistics about the server.",
    run: (x, argv) => x.reply.verbatim(infoText(x.engine, argv.slice(1))),
  },
  {
    name: "dbsize",
    arity: 1,
    flags: ["readonly", "fast"],
    group: "server",
    summary: "Returns the number of keys in the database.",
    run: (x) => x.reply.integer(x.db.size),
  },
  {
    name: "flushdb",
    arity: -1,
    flags: ["write"],
    group: "server",
    summary: "Removes every key of the selected database.",
    run: (x, argv) => {
      const lazy = flushIsLazy(x, argv);
      x.engine.tracking.flushed(x.session, x.engine.sessions.values());
      if (lazy) x.engine.stats.lazyFree.databaseDropped(x.db.size);
      x.db.clear();
      x.reply.simple("OK");
    },
  },
  {
    name: "flushall",
    arity: -1,
    flags: ["write"],
    group: "server",
    summary: "Removes every key of every database.",
    run: (x, argv) => {
      const lazy = flushIsLazy(x, argv);
      x.engine.tracking.flushed(x.session, x.engine.sessions.values());
      for (const db of x.engine.dbs) {
        if (lazy) x.engine.stats.lazyFree.databaseDropped(db.size);
        db.clear();
      }
      x.reply.simple("OK");
    },
  },
  {
    name: "config",
    arity: -2,
    flags: [],
    group: "server",
    summary: "Reads and changes configuration parameters.",
    subcommands: [
      sub("config", "get", -3, "Returns parameters matching patterns.", config),
      sub("config", "set", -4, "Sets parameters (remembered even when svc does not act on them).", config),
      sub("config", "resetstat", 2, "Resets the statistics.", config),
      sub("config", "rewrite", 2, "Refused: svc's configuration lives in its flags, not a file.", config),
      sub("config", "help", 2, "Shows CONFIG's subcommands.", config, helpFlags),
    ],
  },
  {
    name: "lolwut",
    arity: -1,
    flags: ["readonly", "fast"],
    group: "server",
    summary: "Shows the Redis version svc answers as (without Redis's computer art).",
    run: (x, argv) => {
      // VERSION's number is checked as Redis checks it; every version draws the same here.
      if (argv.length >= 3 && isKeyword(argv[1]!, "VERSION") && parseInt64(argv[2]!) === null) throw notAnInteger();
      x.reply.verbatim(`Redis ver. ${redisCompatibleVersion}\n`);
    },
  },
  {
    name: "time",
    arity: 1,
    flags: ["loading", "stale", "fast"],
    group: "server",
    summary: "Returns the server time.",
    run: (x) => {
      const micros = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
      x.reply.array(2);
      x.reply.bulk(String(micros / 1_000_000n));
      x.reply.bulk(String(micros % 1_000_000n));
    },
  },
  {
    name: "memory",
    arity: -2,
    flags: [],
    group: "server",
    summary: "Memory introspection (STATS, DOCTOR, USAGE, MALLOC-STATS, PURGE).",
    subcommands: [
      // Redis asks jemalloc to return dirty pages; our counterpart is a full, synchronous garbage
      // collection, after which the allocator can give freed pages back to the OS.
      sub(
        "memory",
        "purge",
        2,
        "Runs a full garbage collection.",
        (x) => {
          Bun.gc(true);
          x.reply.simple("OK");
        },
        [],
      ),
      {
        name: "memory|usage",
        arity: -3,
        flags: ["readonly"],
        group: "server",
        keys: [2, 2, 1],
        summary: "Estimates the bytes a key and its value take.",
        run: (x, argv) => {
          const samples = parseMemoryUsageSamples(argv);
          const bytes = keyMemoryBytes(x.db, argv[2]!, samples);
          if (bytes === null) return x.reply.bulk(null);
          x.reply.integer(bytes);
        },
      },
      sub("memory", "stats", 2, "Describes where the memory goes.", (x) => replyMemoryStats(x.reply, memoryStats(x.engine)), []),
      sub("memory", "doctor", 2, "Reports memory problems.", (x) => x.reply.verbatim(memoryDoctor(memoryStats(x.engine))), []),
      sub("memory", "malloc-stats", 2, "Returns the runtime's and its allocator's statistics.", (x) => x.reply.verbatim(mallocStats()), []),
      sub(
        "memory",
        "help",
        2,
        "Shows MEMORY's subcommands.",
        (x) =>
          helpReply(x, "MEMORY", [
            "DOCTOR",
            "    Return a report of what stands out in the memory use, and what to do about it.",
            "MALLOC-STATS",
            "    Return the runtime's heap figures and its allocator's statistics.",
            "PURGE",
            "    Run a full garbage collection so freed memory can return to the OS.",
            "STATS",
            "    Return where the memory goes, in Redis's fields.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return the estimated bytes <key> and its value take. Elements of a large",
            "    collection are sampled up to <count> times (default: 5, 0 means sample all).",
          ]),
        ["loading", "stale"],
      ),
    ],
  },
  {
    name: "slowlog",
    arity: -2,
    flags: [],
    group: "server",
    summary: "The log of slow commands (GET, LEN, RESET).",
    subcommands: [
      sub("slowlog", "get", -2, "Returns the newest entries of the slow log.", slowlogGet, slowlogFlags),
      sub("slowlog", "len", 2, "Returns how many entries the slow log holds.", (x) => x.reply.integer(x.engine.slowlog.length), slowlogFlags),
      sub(
        "slowlog",
        "reset",
        2,
        "Empties the slow log.",
        (x) => {
          x.engine.slowlog.reset();
          x.reply.simple("OK");
        },
        slowlogFlags,
      ),
      sub(
        "slowlog",
        "help",
        2,
        "Shows SLOWLOG's subcommands.",
        (x) =>
          helpReply(x, "SLOWLOG", [
            "GET [<count>]",
            "    Return the newest <count> entries (default 10, -1 for all). An entry is: id, Unix time,",
            "    microseconds taken, the arguments, the client's address, the client's name.",
            "LEN",
            "    Return how many entries the log holds.",
            "RESET",
            "    Empty the log.",
          ]),
        helpFlags,
      ),
    ],
  },
  {
    name: "debug",
    arity: -2,
    flags: ["admin", "noscript", "loading", "stale"],
    group: "server",
    summary: "Debugging commands (SLEEP, SET-ACTIVE-EXPIRE).",
    protectedBy: "enable-debug-command",
    run: debug,
  },
];
