/**
 * DUMP and RESTORE: a key's value as Redis's serialized form (rdb/: a value in RDB format, the
 * RDB version, a CRC-64), and back. A DUMP from svc RESTOREs in Redis 5.0 and later, and a DUMP
 * from Redis 5.0 to 7.2 RESTOREs here, whatever encoding it used — so keys move between the two
 * with any tool that uses these commands (MIGRATE-style copies, backup scripts).
 *
 * RESTORE checks as Redis 7.0 does, in its order: options, then an existing key without REPLACE
 * (BUSYKEY), the TTL, the payload's version and checksum, the value itself ("Bad data format").
 * A relative TTL is logged to the append-only file as an absolute one with ABSTTL, as Redis
 * propagates it; a TTL already past stores nothing (and deletes a key REPLACE named). As in Redis,
 * IDLETIME sets the key's idle time under an LRU or no policy and FREQ its access counter under
 * an LFU one; the other is checked and has no effect.
 */
import { isKeyword, parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, syntaxError } from "../text/errors.ts";
import { framePayload, unframePayload } from "../rdb/dump-payload.ts";
import { readValue } from "../rdb/value-reader.ts";
import { writeValue } from "../rdb/value-writer.ts";
import { getValue } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";

/** LFU counters Redis keeps are 8 bits. */
const frequencyMax = 255;

function dump(x: Exec, argv: string[]): void {
  const value = getValue(x, argv[1]!);
  if (value === undefined) return x.reply.bulk(null);
  const bytes = writeValue(value);
  if (bytes === null) throw new KvError("ERR DUMP of a Bloom filter is not supported; move it with BF.SCANDUMP and BF.LOADCHUNK");
  const payload = framePayload(bytes);
  x.reply.bulkBytes(payload, 0, payload.length);
}

interface RestoreOptions {
  replace: boolean;
  absoluteTtl: boolean;
  idleSeconds: number | null;
  frequency: number | null;
}

function parseRestoreOptions(argv: readonly string[]): RestoreOptions {
  const o: RestoreOptions = { replace: false, absoluteTtl: false, idleSeconds: null, frequency: null };
  for (let i = 4; i < argv.length; i++) {
    const word = argv[i]!;
    const left = argv.length - i - 1;
    if (isKeyword(word, "REPLACE")) o.replace = true;
    else if (isKeyword(word, "ABSTTL")) o.absoluteTtl = true;
    else if (isKeyword(word, "IDLETIME") && left >= 1 && o.frequency === null) {
      const n = parseInt64(argv[++i]!);
      if (n === null) throw notAnInteger();
      if (n < 0n) throw new KvError("ERR Invalid IDLETIME value, must be >= 0");
      o.idleSeconds = Number(n);
    } else if (isKeyword(word, "FREQ") && left >= 1 && o.idleSeconds === null) {
      const n = parseInt64(argv[++i]!);
      if (n === null) throw notAnInteger();
      if (n < 0n || n > BigInt(frequencyMax)) throw new KvError(`ERR Invalid FREQ value, must be >= 0 and <= ${frequencyMax}`);
      o.frequency = Number(n);
    } else throw syntaxError();
  }
  return o;
}

function restore(x: Exec, argv: string[]): void {
  const [, key, ttlText, payloadText] = argv as [string, string, string, string];
  const o = parseRestoreOptions(argv);
  if (!o.replace && x.db.has(key)) throw new KvError("BUSYKEY Target key name already exists.");
  const ttl = parseInt64(ttlText);
  if (ttl === null) throw notAnInteger();
  if (ttl < 0n) throw new KvError("ERR Invalid TTL value, must be >= 0");
  const framed = unframePayload(Buffer.from(payloadText, "latin1"));
  if (framed === null) throw new KvError("ERR DUMP payload version or checksum are wrong");
  const value = readValue(framed);
  if (value === null) throw new KvError("ERR Bad data format");
  const deleted = o.replace && x.db.deleteAsIs(key);
  const nowMs = x.engine.clock.nowMs();
  const expiresAt = ttl === 0n ? null : Number(ttl) + (o.absoluteTtl ? 0 : nowMs);
  if (expiresAt !== null && x.engine.alreadyPast(expiresAt, nowMs)) {
    // Already past: nothing is stored, and a replaced key's deletion is what the file records.
    if (deleted) {
      x.propagate = [["DEL", key]];
      x.db.notify("del", key);
    }
    return x.reply.simple("OK");
  }
  x.db.set(key, value);
  if (expiresAt !== null) {
    x.db.setExpire(key, expiresAt);
    if (!o.absoluteTtl) x.propagate = [[argv[0]!, key, String(expiresAt), ...argv.slice(3), "ABSTTL"]];
  }
  if (x.db.frequency !== null) {
    if (o.frequency !== null) x.db.setAccessCounter(key, o.frequency);
  } else if (o.idleSeconds !== null) x.db.setIdleMs(key, o.idleSeconds * 1000);
  x.db.notify("restore", key);
  x.reply.simple("OK");
}

export const dumpCommands: readonly CommandSpec[] = [
  { name: "dump", arity: 2, flags: ["readonly"], group: "generic", keys: [1, 1, 1], summary: "Returns a key's value in Redis's serialized form.", run: dump },
  {
    name: "restore",
    arity: -4,
    flags: ["write", "denyoom"],
    group: "generic",
    keys: [1, 1, 1],
    summary: "Creates a key from a serialized value (DUMP's).",
    run: restore,
  },
  {
    // What a cluster's MIGRATE sends, to be taken during a slot's move (ASKING); RESTORE here.
    name: "restore-asking",
    arity: -4,
    flags: ["write", "denyoom", "asking"],
    group: "server",
    keys: [1, 1, 1],
    summary: "RESTORE, as a cluster's MIGRATE sends it.",
    run: restore,
  },
];
