/**
 * MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
 * [AUTH2 username password] [KEYS key ...], as Redis 7.0 answers it: the keys are sent to the
 * other server as RESTOREs of their DUMP payloads (after AUTH and SELECT), and each one the
 * target acknowledges is deleted here unless COPY — all while this server serves no one else,
 * as Redis's MIGRATE blocks its server (target-link.ts), so nothing changes a key between its
 * copy and its deletion. The deletions go to the append-only file as one DEL.
 *
 * Its replies: OK; NOKEY when none of the keys is here; "Target instance replied with error: …"
 * with the target's first error (keys it acknowledged are deleted all the same); IOERR when the
 * target cannot be reached, or stops answering, within the timeout (0 or less: 1,000 ms).
 */
import { CommandBuffer } from "../../aof/command-buffer.ts";
import { deleteKey, getValue } from "../../kit/lookup.ts";
import { migrateKeys } from "../../kit/key-specs.ts";
import type { CommandSpec, Exec } from "../../kit/spec.ts";
import { framePayload } from "../../rdb/dump-payload.ts";
import { writeValue } from "../../rdb/value-writer.ts";
import { isKeyword, parseInt64 } from "../../text/args.ts";
import { KvError, notAnInteger, syntaxError } from "../../text/errors.ts";
import { exchangeWithTarget } from "./target-link.ts";

/** The timeout MIGRATE takes when given 0 or less. */
const timeoutDefaultMs = 1_000;

interface MigrateOptions {
  copy: boolean;
  replace: boolean;
  /** AUTH's password, or AUTH2's username and password. */
  auth: string[] | null;
  /** Where the keys start in argv, and how many. */
  firstKey: number;
  keyCount: number;
}

function parseOptions(argv: readonly string[]): MigrateOptions {
  const o: MigrateOptions = { copy: false, replace: false, auth: null, firstKey: 3, keyCount: 1 };
  for (let i = 6; i < argv.length; i++) {
    const word = argv[i]!;
    const left = argv.length - 1 - i;
    if (isKeyword(word, "COPY")) o.copy = true;
    else if (isKeyword(word, "REPLACE")) o.replace = true;
    else if (isKeyword(word, "AUTH")) {
      if (left < 1) throw syntaxError();
      o.auth = [argv[++i]!];
    } else if (isKeyword(word, "AUTH2")) {
      if (left < 2) throw syntaxError();
      o.auth = [argv[i + 1]!, argv[i + 2]!];
      i += 2;
    } else if (isKeyword(word, "KEYS")) {
      if (argv[3] !== "") throw new KvError("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
      o.firstKey = i + 1;
      o.keyCount = argv.length - i - 1;
      break;
    } else throw syntaxError();
  }
  return o;
}

function migrate(x: Exec, argv: string[]): void {
  const o = parseOptions(argv);
  const timeout = parseInt64(argv[5]!);
  const db = parseInt64(argv[4]!);
  if (timeout === null || db === null) throw notAnInteger();
  const timeoutMs = timeout <= 0n ? timeoutDefaultMs : Number(timeout);
  // The port is read as C's atoi reads it: "abc" is port 0, which no connection reaches.
  const port = Number.parseInt(argv[2]!, 10) || 0;

  const request = new CommandBuffer();
  if (o.auth !== null) request.push(["AUTH", ...o.auth]);
  request.push(["SELECT", String(db)]);
  const nowMs = x.engine.clock.nowMs();
  const keys: string[] = [];
  for (let i = o.firstKey; i < o.firstKey + o.keyCount; i++) {
    const key = argv[i]!;
    const value = getValue(x, key);
    if (value === undefined) continue;
    const bytes = writeValue(value);
    if (bytes === null) throw new KvError("ERR DUMP of a Bloom filter is not supported; move it with BF.SCANDUMP and BF.LOADCHUNK");
    const expiresAt = x.db.expiryOf(key);
    // Sent as what is left of its time, at least 1 ms (Redis's MIGRATE sends a relative TTL).
    const ttl = expiresAt === undefined ? 0 : Math.max(1, expiresAt - nowMs);
    const restore = ["RESTORE", key, String(ttl), Buffer.from(framePayload(bytes)).toString("latin1")];
    request.push(o.replace ? [...restore, "REPLACE"] : restore);
    keys.push(key);
  }
  if (keys.length === 0) return x.reply.simple("NOKEY");

  const before = o.auth === null ? 1 : 2;
  const answer = exchangeWithTarget(argv[1]!, port, request.take(), before + keys.length, timeoutMs);
  if ("failed" in answer && answer.failed === "connecting") return x.reply.error("IOERR error or timeout connecting to the client");

  // The replies to AUTH and SELECT, then one per RESTORE: a key the target took is deleted here,
  // unless AUTH or SELECT failed. The error told is the first the target gave.
  const lines = answer.lines;
  const refusedFirst = lines.slice(0, before).find((line) => line.startsWith("-"));
  let targetError: string | null = refusedFirst ?? null;
  const deleted: string[] = [];
  for (let j = 0; j < keys.length; j++) {
    const line = lines[before + j];
    if (line === undefined) break;
    if (line.startsWith("-")) targetError ??= line;
    else if (refusedFirst === undefined && !o.copy && deleteKey(x.db, keys[j]!)) deleted.push(keys[j]!);
  }
  if (deleted.length > 0) x.propagate = [["DEL", ...deleted]];
  if (targetError !== null) return x.reply.error(`ERR Target instance replied with error: ${targetError.slice(1)}`);
  if ("failed" in answer) return x.reply.error(`IOERR error or timeout ${answer.failed} to target instance`);
  x.reply.simple("OK");
}

export const migrateCommands: CommandSpec[] = [
  {
    name: "migrate",
    arity: -6,
    flags: ["write", "movablekeys"],
    group: "generic",
    summary: "Moves keys to another server: RESTOREs them there, then deletes them here (COPY keeps them).",
    keys: [3, 3, 1],
    movableKeys: (argv) => migrateKeys(argv).map((key) => argv[key.at]!),
    run: migrate,
  },
];
