/**
 * Lazy freeing, as INFO reports it (lazyfree_pending_objects, lazyfreed_objects) and as memory
 * sees it. Redis frees a large value that UNLINK deletes (or DEL under lazyfree-lazy-user-del),
 * and the databases FLUSHDB/FLUSHALL ASYNC empty, on a background thread, counting one object per
 * value and one per key of a flushed database. Here a deleted value is garbage the collector takes
 * in its own time, so the count is made when the value is let go; pending is 0, as Redis's is
 * once its thread caught up. So that the memory really comes back soon after such a large free,
 * and used_memory drops as Redis's does, a full collection is then run (collectSoon).
 */
import { kvLazyFreeCollectIntervalMs, kvLazyFreeEffortMin, kvListNodeBytesMax } from "../../core/limits.ts";
import { encodingOf } from "../types/encoding.ts";
import type { Value } from "../types/value.ts";
import type { List } from "../types/list/items.ts";
import type { Stream } from "../types/stream/stream.ts";

/** Bytes a listpack spends around each entry: its length header, and the back-length after it (at most). */
function listpackEntryBytes(item: string): number {
  const header = item.length < 64 ? 1 : item.length < 4096 ? 2 : 5;
  const entry = header + item.length;
  const backLength = entry < 128 ? 1 : entry < 16_384 ? 2 : entry < 2_097_152 ? 3 : entry < 268_435_456 ? 4 : 5;
  return entry + backLength;
}

/**
 * The nodes Redis's quicklist would cut `list` into (listpacks of at most kvListNodeBytesMax),
 * counted only until they pass kvLazyFreeEffortMin, which is all the answer is used for.
 */
function listNodes(list: List): number {
  let nodes = 1;
  let bytes = 0;
  for (const item of list) {
    const entry = listpackEntryBytes(item);
    if (bytes > 0 && bytes + entry > kvListNodeBytesMax) {
      if (++nodes > kvLazyFreeEffortMin) break;
      bytes = 0;
    }
    bytes += entry;
  }
  return nodes;
}

/** A stream's nodes, and for its groups one object each plus the first group's pending entries, as Redis estimates them. */
function streamEffort(stream: Stream): number {
  const first = stream.groups.values().next().value;
  return stream.nodeCount + (first === undefined ? 0 : stream.groups.size * (1 + first.pendingCount));
}

/**
 * Redis's lazyfreeGetFreeEffort: how many allocations freeing `value` takes — a string, and any
 * value in a compact encoding, is one; a hash table, sorted set or stream its elements or nodes.
 */
export function freeEffort(value: Value): number {
  if (typeof value === "string") return 1;
  switch (value.kind) {
    case "list":
      return listNodes(value as List);
    case "stream":
      return streamEffort(value as Stream);
    case "hash":
    case "set":
    case "zset": {
      const encoding = encodingOf(value);
      return encoding === "hashtable" || encoding === "skiplist" ? value.size : 1;
    }
    default:
      return 1;
  }
}

/** Full collections run after a large free (collectSoon). */
const collectsPerFree = 2;

export class LazyFree {
  /** Objects freed the lazy way since start or CONFIG RESETSTAT (INFO's lazyfreed_objects). */
  freedObjects = 0;
  /** Objects handed over and not yet freed (lazyfree_pending_objects): none, since handing over is freeing here. */
  readonly pendingObjects = 0;
  private lastCollectMs = -Infinity;
  private collectTimer: ReturnType<typeof setTimeout> | null = null;
  /** Collections still to run for the frees so far. */
  private collectsLeft = 0;

  /** A value UNLINK (or a lazy DEL) let go of: counted if Redis would have freed it in the background. */
  valueDropped(value: Value): void {
    if (freeEffort(value) <= kvLazyFreeEffortMin) return;
    this.freedObjects++;
    this.collectSoon();
  }

  /** A database of `keys` keys emptied by FLUSHDB or FLUSHALL ASYNC: each key an object, as Redis counts them. */
  databaseDropped(keys: number): void {
    this.freedObjects += keys;
    if (keys > 0) this.collectSoon();
  }

  /**
   * Has the collector run a full collection soon, from a timer once the command is done, at most
   * once per kvLazyFreeCollectIntervalMs. From inside the command, the collector would still find
   * the value on the stack (JSC scans it conservatively) and keep it. An asynchronous request
   * (Bun.gc(false)) was tried first: it often left a large old value in place for seconds, as the
   * collection it starts need not be a full one. The price of a full one is a pause of the event
   * loop that grows with the live heap (docs/kv.md, "Known weak spots").
   */
  private collectSoon(): void {
    // Twice, the second a little later from a stack that has moved on: the first can still meet
    // a stale pointer to the value there and keep it (it did about one time in three).
    this.collectsLeft = collectsPerFree;
    if (this.collectTimer === null) this.scheduleCollect();
  }

  private scheduleCollect(): void {
    const wait = Math.max(0, this.lastCollectMs + kvLazyFreeCollectIntervalMs - performance.now());
    this.collectTimer = setTimeout(() => {
      this.collectTimer = null;
      this.lastCollectMs = performance.now();
      Bun.gc(true);
      if (--this.collectsLeft > 0) this.scheduleCollect();
    }, wait);
  }
}
