/**
 * Transactions' generated steps on two RESP2 clients (A, B) and a RESP3 one (C): MULTI, EXEC,
 * DISCARD, WATCH and UNWATCH in and out of place; commands refused while queueing (unknown, wrong
 * arity, WATCH and MULTI inside MULTI) and ones that fail only when EXEC runs (WRONGTYPE, a
 * script's error, NOSCRIPT); writes by the other clients to watched keys, including writes that
 * change nothing, FLUSHDB/FLUSHALL/SWAPDB/MOVE/RENAME, SELECT, keys whose time has passed (PXAT 1:
 * with the active expiry cycle off, a key stays until a command meets it, on both servers alike)
 * and keys that expire on their own being read; scripts and blocking commands queued. The state
 * compared after a sequence: the keyspace of databases 0 and 1.
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, keyspaceLines, lit, type Step } from "../duet.ts";

const key = fc.constantFrom("w", "x", "y");
const keys = fc.array(key, { minLength: 1, maxLength: 3 });
const value = fc.constantFrom("1", "v", "10");

const writes = fc.oneof(
  cmd(lit("SET"), key, value),
  cmd(lit("SET"), key, value, fc.constantFrom<string[]>(["PXAT", "1"], ["EX", "1000"], ["NX"], ["XX"], ["KEEPTTL"])),
  cmd(fc.constantFrom("INCR", "DEL", "PERSIST", "GETDEL"), key),
  cmd(lit("LPUSH"), key, value),
  cmd(lit("EXPIRE"), key, fc.constantFrom("0", "1000", "-1")),
  cmd(lit("PEXPIREAT"), key, lit("1")),
  cmd(lit("RENAME"), key, key),
  cmd(lit("MOVE"), key, lit("1")),
  cmd(lit("COPY"), key, key, fc.constantFrom<string[]>([], ["REPLACE"])),
  cmd(lit("GETEX"), key, fc.constantFrom<string[]>(["PERSIST"], ["PXAT", "1"], ["EX", "100"])),
  fc.constantFrom<string[]>(["FLUSHDB"], ["FLUSHALL"], ["SWAPDB", "0", "1"], ["SELECT", "1"], ["SELECT", "0"]),
);
const reads = fc.oneof(cmd(fc.constantFrom("GET", "EXISTS", "TTL", "TYPE", "STRLEN"), key), fc.constantFrom<string[]>(["DBSIZE"], ["KEYS", "w"]));
/** Refused while queueing, or failing only when EXEC runs. */
const failing = fc.constantFrom<string[]>(
  ["NOSUCHCOMMAND"],
  ["GET"],
  ["SET", "x"],
  ["WATCH"],
  ["MULTI"],
  ["INCR", "w", "extra"],
  ["LPUSH"],
  ["EVAL"],
  ["EVAL", "return redis.call('incr', KEYS[1])", "1", "x"],
  ["EVAL", "error('in a script')", "0"],
  ["EVALSHA", "0123456789012345678901234567890123456789", "0"],
  ["EVAL", "return redis.call('multi')", "0"],
  ["EVAL", "return 1", "-1"],
  ["INCRBY", "x", "abc"],
  ["HSET", "x", "f", "v"],
);
const scripts = fc.constantFrom<string[]>(
  ["EVAL", "redis.call('set', KEYS[1], 'from-script'); return redis.call('get', KEYS[1])", "1", "w"],
  ["EVAL", "return redis.call('incr', KEYS[1])", "1", "y"],
  ["SCRIPT", "LOAD", "return 'loaded'"],
  ["EVALSHA", new Bun.CryptoHasher("sha1").update("return 'loaded'").digest("hex"), "0"],
  ["EVAL_RO", "return redis.call('get', KEYS[1])", "1", "w"],
  ["FUNCTION", "STATS"],
);
/** Blocking commands: inside MULTI they answer at once; outside they are sent only on a key that has data. */
const blocking = fc.constantFrom<string[]>(
  ["BLPOP", "w", "0"],
  ["BRPOPLPUSH", "x", "y", "0"],
  ["BLMOVE", "w", "x", "LEFT", "RIGHT", "0"],
  ["XREAD", "BLOCK", "0", "STREAMS", "x", "$"],
);
const control = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<string[]>(["MULTI"], ["EXEC"], ["DISCARD"], ["UNWATCH"], ["RESET"], ["exec"]) },
  { weight: 3, arbitrary: cmd(lit("WATCH"), keys) },
);

const client = fc.constantFrom("A", "A", "B", "C");
/** A transaction of one client, possibly watched, with another client's command between steps. */
const transaction = fc
  .tuple(
    fc.constantFrom("A", "C"),
    fc.option(keys, { nil: undefined }),
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: writes },
        { weight: 2, arbitrary: reads },
        { weight: 2, arbitrary: failing },
        { weight: 1, arbitrary: scripts },
        { weight: 1, arbitrary: blocking },
      ),
      { minLength: 0, maxLength: 4 },
    ),
    fc.option(writes, { nil: undefined }),
    fc.constantFrom("EXEC", "EXEC", "EXEC", "DISCARD"),
  )
  .map(([c, watched, queued, meanwhile, end]): Step[] => [
    ...(watched === undefined ? [] : [{ client: c, argv: ["WATCH", ...watched] }]),
    ...(meanwhile === undefined ? [] : [{ client: "B", argv: meanwhile }]),
    { client: c, argv: ["MULTI"] },
    ...queued.map((argv) => ({ client: c, argv })),
    { client: c, argv: [end] },
  ]);

export const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: transaction },
      { weight: 3, arbitrary: by(client, writes).map((s) => [s]) },
      { weight: 2, arbitrary: by(client, reads).map((s) => [s]) },
      { weight: 2, arbitrary: by(client, control).map((s) => [s]) },
      { weight: 1, arbitrary: by(client, fc.oneof(failing, scripts)).map((s) => [s]) },
    ),
    { minLength: 1, maxLength: 10 },
  )
  .map((parts) => parts.flat());

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 2 },
    { name: "C", protocol: 3 },
  ],
  // Keys whose time has passed stay until a command meets them, on both servers: otherwise
  // whether the cycle ran between two steps would decide what WATCH and EXEC see.
  reset: [["DEBUG", "SET-ACTIVE-EXPIRE", "0"]],
  // Outside MULTI a blocking command may block (when its key is empty): blocked_clients tells.
  mayBlock: (argv) => /^(BLPOP|BRPOPLPUSH|BLMOVE|XREAD)$/i.test(argv[0]!),
  snapshot: keyspaceLines,
};
