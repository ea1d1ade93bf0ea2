/**
 * Names for the JavaScript frames of a Linux perf profile of a Bun process: reads the JIT dump
 * JavaScriptCore writes (BUN_JSC_useJITDump=1, in BUN_JSC_jitDumpDirectory) and writes
 * /tmp/perf-<pid>.map, which `perf report` reads for that process's [JIT] frames.
 *
 * `perf inject --jit` would read the dump itself, but it takes only files named jit-<pid>.dump and
 * JavaScriptCore names its own jit-<thread>-<pid>.dump, so perf ignores it. A map has no times:
 * where code was freed and other code later put at the same address, the map keeps only the later
 * (perf would name a sample by the earlier, which after a warm-up is rarely what ran).
 *
 *   BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory=/tmp/jd bun src/cli.ts kv …   # the server
 *   perf record -g -p <pid> -- sleep 10                                        # while loaded
 *   bun bench/lib/jit-perf-map.ts /tmp/jd/jit-*-<pid>.dump
 *   perf report --no-children --sort sym
 */
import { readFileSync, writeFileSync } from "node:fs";

/** The dump's record of compiled code (the format's JIT_CODE_LOAD). */
const codeLoadRecord = 0;
/** Bytes of a record's fixed part, then of a code load's fields before its name. */
const recordHeaderBytes = 16;
const codeLoadFieldsBytes = 40;

/** The functions a JIT dump names: address, size and name of each piece of code, in order. */
export function jitDumpEntries(dump: Buffer): { address: bigint; bytes: bigint; name: string }[] {
  const entries: { address: bigint; bytes: bigint; name: string }[] = [];
  // The file header: magic, version, its own size (u32 at 8), …
  let at = dump.readUInt32LE(8);
  while (at + recordHeaderBytes <= dump.length) {
    const id = dump.readUInt32LE(at);
    const size = dump.readUInt32LE(at + 4);
    if (size === 0 || at + size > dump.length) break;
    if (id === codeLoadRecord) {
      const fields = at + recordHeaderBytes;
      const nameStart = fields + codeLoadFieldsBytes;
      const nameEnd = dump.indexOf(0, nameStart);
      entries.push({ address: dump.readBigUInt64LE(fields + 16), bytes: dump.readBigUInt64LE(fields + 24), name: dump.toString("latin1", nameStart, nameEnd) });
    }
    at += size;
  }
  return entries;
}

/** The entries no later entry overlaps: the code each address held last. */
export function latestAtEachAddress<T extends { address: bigint; bytes: bigint }>(entries: readonly T[]): T[] {
  const kept: T[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    const end = e.address + e.bytes;
    if (!kept.some((k) => e.address < k.address + k.bytes && k.address < end)) kept.push(e);
  }
  return kept.reverse();
}

if (import.meta.main) {
  const path = process.argv[2];
  const pid = /jit-\d+-(\d+)\.dump$/.exec(path ?? "")?.[1];
  if (path === undefined || pid === undefined) {
    console.error("usage: bun bench/lib/jit-perf-map.ts <dir>/jit-<thread>-<pid>.dump");
    process.exit(2);
  }
  const entries = latestAtEachAddress(jitDumpEntries(readFileSync(path)));
  writeFileSync(`/tmp/perf-${pid}.map`, entries.map((e) => `${e.address.toString(16)} ${e.bytes.toString(16)} ${e.name}\n`).join(""));
  console.log(`/tmp/perf-${pid}.map: ${entries.length} functions`);
}
