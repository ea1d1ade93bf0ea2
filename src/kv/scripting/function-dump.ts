/**
 * FUNCTION DUMP's payload and FUNCTION RESTORE's reading of it, as Redis 7.0 writes them: each
 * library as an RDB function record (opcode 245, then its code as an RDB string), framed as DUMP
 * frames a value (the RDB version, 10 here as in Redis 7.0, and a CRC-64). A payload from Redis
 * restores here and one from here restores in Redis.
 */
import { KvError } from "../text/errors.ts";
import { unframePayload, framePayload } from "../rdb/dump-payload.ts";
import { BadRdbData, RdbCursor } from "../rdb/rdb-cursor.ts";
import { RdbOutput } from "../rdb/rdb-output.ts";

/** RDB's opcode for a function library (RDB_OPCODE_FUNCTION2), and the pre-release one Redis refuses. */
const functionRecord = 245;
const functionRecordPreRelease = 246;
/** The RDB version function records arrived in (Redis 7.0), which a dump says it was written in. */
const functionsRdbVersion = 10;

/** The payload holding every library's code. */
export function dumpLibraries(codes: readonly string[]): Uint8Array {
  const out = new RdbOutput();
  for (const code of codes) {
    out.byte(functionRecord);
    out.string(code);
  }
  return framePayload(out.take(), functionsRdbVersion);
}

/** The libraries' code a payload holds; throws Redis's error for a payload it would refuse. */
export function restoredLibraries(payload: Uint8Array): string[] {
  const records = unframePayload(payload);
  if (records === null) throw new KvError("ERR DUMP payload version or checksum are wrong");
  const cursor = new RdbCursor(records);
  const codes: string[] = [];
  try {
    while (cursor.at < records.length) {
      const opcode = cursor.byte();
      if (opcode === functionRecordPreRelease) throw new KvError("ERR Pre-GA function format not supported");
      if (opcode !== functionRecord) throw new KvError("ERR given type is not a function");
      codes.push(cursor.string());
    }
  } catch (error) {
    if (error instanceof BadRdbData || error instanceof RangeError) throw new KvError("ERR DUMP payload version or checksum are wrong");
    throw error;
  }
  return codes;
}
