/**
 * MEMORY STATS, DOCTOR and MALLOC-STATS: where the memory goes, in Redis 7.0's field names and
 * reply shape, with svc's meaning where a field has none of its own:
 * - "allocated" is the JavaScript heap in use plus array buffers (INFO's used_memory, which the
 *   key tables' slabs are most of); "active" is the heap's capacity (what it has taken from the
 *   allocator, at least what is in use) plus the buffers; the resident set is the process's RSS,
 *   so rss-overhead is nothing.
 * - A database's hash-table overhead is its key table's slot arrays. A key's time lives in its
 *   entry, so there is no second table for expiries: overhead.hashtable.expires is 0, as are
 *   replication, cluster links and function caches, which svc does not have.
 * DOCTOR and MALLOC-STATS are text for people; their words and layout are svc's.
 */
import { heapStats } from "bun:jsc";
import type { Server } from "../kit/server.ts";
import { clientBuffers } from "./client-buffers.ts";
import { humanBytes } from "../text/human-bytes.ts";
import type { Reply } from "../kit/reply.ts";
import { usedMemoryBytes } from "./server-stats.ts";

export interface MemoryStats {
  peakBytes: number;
  usedBytes: number;
  startupBytes: number;
  clientBytes: number;
  aofBufferBytes: number;
  scriptBytes: number;
  /** Per database with keys: its index, its keys, its hash table's overhead. */
  databases: { index: number; keys: number; tableBytes: number }[];
  overheadBytes: number;
  keys: number;
  activeBytes: number;
  rssBytes: number;
  /** Cached scripts (EVAL, SCRIPT LOAD). */
  scripts: number;
  clients: number;
}

export function memoryStats(engine: Server): MemoryStats {
  const usage = process.memoryUsage();
  const usedBytes = usedMemoryBytes(usage);
  engine.stats.noteMemory(usedBytes);
  const startupBytes = Math.min(usedBytes, engine.stats.memoryAtStartBytes);
  const clientBytes = clientBuffers(engine).totalBytes;
  const aofBufferBytes = engine.aof?.bufferedBytes ?? 0;
  const scripts = engine.scriptsIfStarted;
  const scriptBytes = scripts?.bodyBytes ?? 0;
  const databases = engine.dbs.filter((db) => db.size > 0).map((db) => ({ index: db.index, keys: db.size, tableBytes: db.table.slotBytes }));
  const tablesBytes = databases.reduce((sum, db) => sum + db.tableBytes, 0);
  return {
    peakBytes: engine.stats.memoryPeakBytes,
    usedBytes,
    startupBytes,
    clientBytes,
    aofBufferBytes,
    scriptBytes,
    databases,
    overheadBytes: startupBytes + clientBytes + aofBufferBytes + scriptBytes + tablesBytes,
    keys: databases.reduce((sum, db) => sum + db.keys, 0),
    // process.memoryUsage's heapTotal can read below heapUsed right after a collection; the
    // heap's own capacity cannot.
    activeBytes: Math.max(heapStats().heapCapacity, usage.heapUsed) + usage.external,
    rssBytes: usage.rss,
    scripts: scripts?.size ?? 0,
    clients: engine.sessions.size,
  };
}

const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);

/** MEMORY STATS: Redis 7.0's fields in its order, a map (a flat array in RESP2). */
export function replyMemoryStats(reply: Reply, m: MemoryStats): void {
  const netBytes = Math.max(0, m.usedBytes - m.startupBytes);
  const datasetBytes = Math.max(0, m.usedBytes - m.overheadBytes);
  const integers: [string, number][] = [
    ["peak.allocated", m.peakBytes],
    ["total.allocated", m.usedBytes],
    ["startup.allocated", m.startupBytes],
    ["replication.backlog", 0],
    ["clients.slaves", 0],
    ["clients.normal", m.clientBytes],
    ["cluster.links", 0],
    ["aof.buffer", m.aofBufferBytes],
    ["lua.caches", m.scriptBytes],
    ["functions.caches", 0],
  ];
  const after: [string, number, "integer" | "double"][] = [
    ["overhead.total", m.overheadBytes, "integer"],
    ["keys.count", m.keys, "integer"],
    ["keys.bytes-per-key", m.keys === 0 ? 0 : Math.floor(netBytes / m.keys), "integer"],
    ["dataset.bytes", datasetBytes, "integer"],
    ["dataset.percentage", ratio(datasetBytes * 100, netBytes), "double"],
    ["peak.percentage", ratio(m.usedBytes * 100, m.peakBytes), "double"],
    ["allocator.allocated", m.usedBytes, "integer"],
    ["allocator.active", m.activeBytes, "integer"],
    ["allocator.resident", m.rssBytes, "integer"],
    ["allocator-fragmentation.ratio", ratio(m.activeBytes, m.usedBytes), "double"],
    ["allocator-fragmentation.bytes", m.activeBytes - m.usedBytes, "integer"],
    ["allocator-rss.ratio", ratio(m.rssBytes, m.activeBytes), "double"],
    ["allocator-rss.bytes", m.rssBytes - m.activeBytes, "integer"],
    ["rss-overhead.ratio", 1, "double"],
    ["rss-overhead.bytes", 0, "integer"],
    ["fragmentation", ratio(m.rssBytes, m.usedBytes), "double"],
    ["fragmentation.bytes", m.rssBytes - m.usedBytes, "integer"],
  ];
  reply.map(integers.length + m.databases.length + after.length);
  for (const [name, value] of integers) {
    reply.bulk(name);
    reply.integer(value);
  }
  for (const db of m.databases) {
    reply.bulk(`db.${db.index}`);
    reply.map(3);
    reply.bulk("overhead.hashtable.main");
    reply.integer(db.tableBytes);
    reply.bulk("overhead.hashtable.expires");
    reply.integer(0);
    reply.bulk("overhead.hashtable.slot-to-keys");
    reply.integer(0);
  }
  for (const [name, value, kind] of after) {
    reply.bulk(name);
    if (kind === "integer") reply.integer(value);
    else reply.double(value);
  }
}

/** Below this much data the doctor has nothing to judge (Redis's doctor also waits for 5 MB). */
const doctorDatasetBytesMin = 5 * 1024 * 1024;
/** A peak this many times what is used now is worth a word. */
const peakRatioNotable = 1.5;
/** RSS this many times the heap in use, and this many bytes over it, is worth a word. */
const fragmentationRatioNotable = 1.4;
const fragmentationBytesNotable = 10 * 1024 * 1024;
/** Client buffers this large on average are worth a word. */
const clientBytesNotable = 200 * 1024;
/** Cached scripts past this many are worth a word. */
const scriptsNotable = 1000;

/**
 * MEMORY DOCTOR: what stands out in memoryStats, and what to do about it. As Redis's doctor does
 * below 5 MB, a server that holds little data gets that said and nothing else: the ratios it
 * judges mean nothing there. Redis counts its whole allocation, which starts at about 1 MB; ours
 * starts at tens of MB of runtime, so what counts is the growth since start — and a server with
 * no keys holds no data whatever its heap grew by (a heap grows with garbage not yet collected,
 * compiled code and client traffic, which would otherwise make an empty server's RSS-to-heap
 * ratio a finding on one machine and not on another).
 */
export function memoryDoctor(m: MemoryStats): string {
  const grownBytes = Math.max(0, m.usedBytes - m.startupBytes);
  if (m.keys === 0 || grownBytes < doctorDatasetBytesMin) {
    return `This server holds little data (${m.keys} keys, ${humanBytes(grownBytes)} above what it used at start): there is nothing to judge yet.\n`;
  }
  const findings: string[] = [];
  if (m.peakBytes > m.usedBytes * peakRatioNotable) {
    findings.push(
      `The peak (${humanBytes(m.peakBytes)}) is ${(m.peakBytes / m.usedBytes).toFixed(1)} times what is in use now (${humanBytes(m.usedBytes)}): ` +
        "the data shrank since, or a burst of large requests or replies passed through. The process keeps what the heap grew to until the collector and the allocator give it back.",
    );
  }
  if (m.rssBytes > m.usedBytes * fragmentationRatioNotable && m.rssBytes - m.usedBytes > fragmentationBytesNotable) {
    findings.push(
      `The resident set (${humanBytes(m.rssBytes)}) is ${(m.rssBytes / m.usedBytes).toFixed(2)} times the heap in use: garbage not yet collected, heap pages ` +
        "kept for reuse, and the runtime itself (about 70 MB for an empty server). MEMORY PURGE runs a full collection so that freed pages can go back to the system.",
    );
  }
  if (m.clients > 0 && m.clientBytes / m.clients > clientBytesNotable) {
    findings.push(
      `Clients hold ${humanBytes(m.clientBytes / m.clients)} of buffers each on average: large pipelines, slow readers of large replies, or Pub/Sub subscribers behind. CLIENT LIST shows each one's qbuf and omem.`,
    );
  }
  if (m.scripts > scriptsNotable) {
    findings.push(`${m.scripts} scripts are cached: EVAL of scripts built with their arguments inside caches each one. Pass values in ARGV, or SCRIPT FLUSH.`);
  }
  if (findings.length === 0) return "No memory problem stands out: the heap, the resident set, client buffers and cached scripts all look as they should.\n";
  return `${findings.map((f) => `- ${f}`).join("\n")}\n`;
}

/** MEMORY MALLOC-STATS: the runtime's heap figures and its allocator's (mimalloc's) own statistics. */
export function mallocStats(): string {
  const heap = heapStats();
  const usage = process.memoryUsage();
  const lines = [
    `___ Begin Bun ${Bun.version} memory statistics ___`,
    `rss: ${usage.rss}`,
    `heap used: ${usage.heapUsed}`,
    `heap total: ${usage.heapTotal}`,
    `array buffers and other external memory: ${usage.external}`,
    `JavaScript objects: ${heap.objectCount}`,
    `heap size: ${heap.heapSize}`,
    `heap capacity: ${heap.heapCapacity}`,
    "mimalloc:",
    JSON.stringify((heap as { mimalloc?: unknown }).mimalloc ?? null, null, 2),
    "___ End memory statistics ___",
  ];
  return `${lines.join("\n")}\n`;
}
