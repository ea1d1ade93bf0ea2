/**
 * Functions' generated steps: FUNCTION LOAD [REPLACE] of libraries from a pool (good ones that
 * collide by library and by function name, and bad ones Redis refuses at load), LIST with its
 * options good and bad, DELETE, FLUSH with every mode, DUMP then RESTORE of that payload under
 * each policy, STATS, KILL, and FCALL/FCALL_RO with numkeys at and past its limits, against the
 * functions' flags — on a RESP2 client (A) and a RESP3 one (B). The state compared after a
 * sequence: the libraries (FUNCTION LIST WITHCODE), FUNCTION STATS, the keyspace, and the calls
 * and errors INFO counts.
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, keyspaceLines, lit, type Step } from "../duet.ts";
import { type RespClient, type RespValue, show } from "../resp-client.ts";
import { countsLines } from "./scripting.ts";

const register = (name: string, body: string, flags = "") =>
  `redis.register_function{function_name='${name}', callback=function(keys, args) ${body} end${flags === "" ? "" : `, flags={${flags}}`}}`;

/** Libraries: each one a case of FUNCTION LOAD Redis checks. */
export const libraries = [
  `#!lua name=liba\n${register("fa", "return redis.call('set', keys[1], args[1] or 'a')")}\n${register("fa_ro", "return redis.call('get', keys[1])", "'no-writes'")}`,
  `#!lua name=liba\n${register("fa", "return 'replaced'")}`,
  `#!lua name=libb\n${register("fb", "return {#keys, #args}")}\n${register("fb_oom", "return redis.call('set', keys[1], 'o')", "'allow-oom'")}`,
  `#!lua name=libc\n${register("fa", "return 'c'")}`,
  `#!lua name=libd\n${register("fd_err", "return redis.call('incr', keys[1])")}\n${register("fd_raise", "error('raised')")}\n${register("fd_pcall", "return redis.pcall('nosuch')")}`,
  `#!lua name=libe\n${register("fe_write_ro", "return redis.call('del', keys[1])", "'no-writes'")}\n${register("fe_any", "return redis.call('get', 'undeclared')", "'allow-stale', 'no-cluster'")}`,
  `#!lua name=libf\nredis.register_function('ff', function(keys, args) return args[1] end)`,
  // Refused at load, each with Redis's own message.
  "return 1",
  "#!lua",
  "#!lua name=bad-name\nredis.register_function('x', function() return 1 end)",
  "#!lua name=x foo=bar\nredis.register_function('x', function() return 1 end)",
  "#!js name=x\nredis.register_function('x', function() return 1 end)",
  "#!lua name=empty\nlocal a = 1",
  "#!lua name=syntax\nx = (",
  "#!lua name=calls\nredis.call('ping')",
  "#!lua name=dup\nredis.register_function('d', function() end)\nredis.register_function('d', function() end)",
  "#!lua name=flags\nredis.register_function{function_name='x', callback=function() end, flags={'no-such-flag'}}",
  "#!lua name=fname\nredis.register_function('bad name', function() end)",
  // Answered differently until 2026-11-29 (what a library sees while it loads, register_function's
  // own messages, a NUL in the metadata line): now as redis-server.
  "#!lua name=raises\nerror('at load')",
  "#!lua name=args\nredis.register_function('x')",
  "#!lua name=lib1\nlocal r = math.random()\nredis.register_function('f1', function() return 1 end)",
  "#!lua name=lib1\nredis.setresp(3)\nredis.register_function('f1', function() return 1 end)",
  "#!lua name=bad\u0000foramat\nredis.register_function('f', function() return 1 end)",
  "#!lua name=lib1\nredis.register_function{function_name=function() return 1 end, callback=function() return 1 end}",
  "#!lua name=cased\nredis.register_function{FUNCTION_NAME='fc', Callback=function() return 1 end, FLAGS={'NO-WRITES', 'no-writes', 'Allow-OOM'}}",
  "#!lua name=numbered\nredis.register_function(5, function() return 5 end)",
  "#!lua name=keyed\nredis.register_function{[5]='x'}",
];

const library = fc.constantFrom(...libraries);
const fname = fc.constantFrom("fa", "fa_ro", "fb", "fb_oom", "fd_err", "fd_raise", "fd_pcall", "fe_write_ro", "fe_any", "ff", "FA", "nosuch", "fc", "5");
const libname = fc.constantFrom("liba", "libb", "libc", "libd", "libe", "libf", "nolib", "LIBA", "cased", "numbered");
const key = fc.constantFrom("k1", "k2");
const numkeys = fc.constantFrom("0", "1", "2", "-1", "3", "x");

const fcall = fc
  .tuple(
    fc.constantFrom("FCALL", "FCALL", "FCALL_RO", "fcall"),
    fname,
    fc.nat(7),
    fc.array(key, { maxLength: 2 }),
    fc.array(fc.constantFrom("1", "v", ""), { maxLength: 2 }),
    numkeys,
  )
  .map(([name, f, shape, keys, args, odd]) => [name, f, shape === 0 ? odd : String(keys.length), ...keys, ...args]);
const functionCommand = fc.oneof(
  { weight: 6, arbitrary: cmd(lit("FUNCTION"), lit("LOAD"), fc.constantFrom<string[]>([], [], ["REPLACE"], ["replace"]), library) },
  {
    weight: 3,
    arbitrary: cmd(
      lit("FUNCTION"),
      lit("LIST"),
      fc.constantFrom<string[]>(
        [],
        ["WITHCODE"],
        ["LIBRARYNAME", "lib*"],
        ["LIBRARYNAME", "liba"],
        ["LIBRARYNAME", "x*"],
        ["withcode", "libraryname", "*b"],
        ["LIBRARYNAME"],
        ["WITHCODE", "WITHCODE"],
        ["LIBRARYNAME", "a", "LIBRARYNAME", "b"],
        ["foo"],
      ),
    ),
  },
  { weight: 2, arbitrary: cmd(lit("FUNCTION"), lit("DELETE"), libname) },
  {
    weight: 1,
    arbitrary: cmd(lit("FUNCTION"), fc.constantFrom<string[]>(["FLUSH"], ["FLUSH", "ASYNC"], ["FLUSH", "SYNC"], ["FLUSH", "LAZY"], ["FLUSH", "SYNC", "ASYNC"])),
  },
  { weight: 2, arbitrary: fc.constant<string[]>(["FUNCTION", "DUMP"]) },
  {
    weight: 2,
    arbitrary: cmd(
      lit("FUNCTION"),
      lit("RESTORE"),
      lit("<saved>"),
      fc.constantFrom<string[]>([], ["APPEND"], ["REPLACE"], ["FLUSH"], ["flush"], ["BAD"], ["FLUSH", "x"]),
    ),
  },
  { weight: 1, arbitrary: fc.constant<string[]>(["FUNCTION", "STATS"]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<string[]>(
      ["FUNCTION", "KILL"],
      ["FUNCTION"],
      ["FUNCTION", "NOSUCH"],
      ["FUNCTION", "LOAD"],
      ["FUNCTION", "DELETE"],
      ["FUNCTION", "DELETE", "a", "b"],
      ["FUNCTION", "RESTORE"],
      ["FUNCTION", "RESTORE", "garbage"],
      ["FUNCTION", "STATS", "x"],
      ["FUNCTION", "DUMP", "x"],
      ["FCALL"],
      ["FCALL", "fa"],
      ["FCALL_RO", "fa"],
    ),
  },
);
const data = fc.oneof(cmd(lit("SET"), key, fc.constantFrom("1", "v")), cmd(lit("HSET"), key, lit("f"), lit("v")), cmd(lit("DEL"), key));

const client = fc.constantFrom("A", "A", "B");
export const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof({ weight: 5, arbitrary: by(client, functionCommand) }, { weight: 5, arbitrary: by(client, fcall) }, { weight: 1, arbitrary: by(client, data) }),
  { minLength: 1, maxLength: 20 },
);

/** The pairs of a RESP2 flat map or a RESP3 map, as [name, value] pairs. */
const pairsOf = (v: RespValue): [RespValue, RespValue][] | null => {
  const items = Array.isArray(v) ? v : v !== null && typeof v === "object" && "map" in v ? v.map : null;
  if (items === null) return null;
  const pairs: [RespValue, RespValue][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) pairs.push([items[i]!, items[i + 1]!]);
  return pairs;
};
const byName = (a: RespValue, b: RespValue) => {
  const name = (v: RespValue) => String(pairsOf(v)?.find(([k]) => k === "library_name" || k === "name")?.[1] ?? "");
  return name(a).localeCompare(name(b));
};

/**
 * FUNCTION LIST with libraries and each library's functions in name order: Redis lists both in
 * its hash tables' order (the command is flagged nondeterministic_output_order), svc in the order
 * they were loaded and registered.
 */
export function sortedList(reply: RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  return [...reply].sort(byName).map((lib) => {
    const pairs = pairsOf(lib);
    if (pairs === null) return lib;
    const sorted = pairs.map(([k, v]) => [k, k === "functions" && Array.isArray(v) ? [...v].sort(byName) : v]);
    return Array.isArray(lib) ? sorted.flat() : { map: sorted.flat() };
  });
}

async function functionLines(c: RespClient): Promise<string[]> {
  return [`list: ${show(sortedList(await c.call("FUNCTION", "LIST", "WITHCODE")))}`, `stats: ${show(await c.call("FUNCTION", "STATS"))}`];
}

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 3 },
  ],
  reset: [["CONFIG", "RESETSTAT"]],
  // The payload RESTORE steps send: the last FUNCTION DUMP's (empty until one ran).
  save: (argv, reply) => (argv[0]!.toUpperCase() === "FUNCTION" && argv[1]?.toUpperCase() === "DUMP" && typeof reply === "string" ? reply : undefined),
  normalise: (argv, reply) => {
    const sub = `${argv[0]} ${argv[1] ?? ""}`.toUpperCase();
    if (sub === "FUNCTION LIST") return sortedList(reply);
    // The payload's bytes differ: Redis compresses each library's code with LZF past 20 bytes
    // and lists libraries in hash-table order; svc writes the code plain (which Redis reads).
    // What it restores is compared instead (FUNCTION LIST after RESTORE, and the state).
    if (sub === "FUNCTION DUMP" && typeof reply === "string") return "<payload>";
    // FUNCTION HELP is prose, svc's in its own words (docs/kv.md).
    if (sub === "FUNCTION HELP") return Array.isArray(reply) ? "<help text>" : reply;
    // RESTORE of several libraries or functions that exist already: Redis names the first its
    // hash table yields, and its tables' order follows a hash seed drawn at each start, so which
    // one it names varies between two runs of redis-server itself.
    if (sub === "FUNCTION RESTORE" && reply !== null && typeof reply === "object" && "e" in reply) {
      return { e: reply.e.replace(/^ERR (Library|Function) \S+ already exists$/, "ERR $1 <one of them> already exists") };
    }
    return reply;
  },
  snapshot: async (c) => [...(await functionLines(c)), ...(await keyspaceLines(c)), ...(await countsLines(c))],
};
