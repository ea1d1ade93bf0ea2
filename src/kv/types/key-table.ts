/**
 * The keys of one database and their values, in an open-addressing hash table whose entries live
 * in byte slabs rather than in JavaScript objects.
 *
 * Why: a lookup in a Map<string, value> chases Map bucket → key cell → key bytes → value cell →
 * value bytes, five likely cache misses for a key among many, and that chase was most of what a
 * GET over 100k random keys cost (docs/kv.md). Here a lookup reads one slot pair (the key's hash
 * and its entry's position) and then one entry, where the key's bytes, its short value's bytes and
 * its last-read time sit side by side: usually two misses.
 *
 * An entry is a 24-byte header and then, inline, the key's bytes (up to keyInlineBytesMax) and a
 * string value's bytes (up to valueInlineBytesMax):
 *
 *   int32 hash | int32 read time | int32 value info | int32 key info | float64 expiry | key bytes | value bytes
 *
 * The expiry is the key's time to live as a Unix ms time, Infinity for none; the keyspace sets it
 * (keyspace.ts), and it is the only place the time is kept, so reading a key checks its time in
 * the entry the lookup already reached: a second lookup in a map of times cost a GET over 100k
 * keys with times to live a third of its speed. Members tables (large sets and hashes) leave it
 * Infinity.
 *
 * value info ≥ 0 is an inline string value's length; < 0 names a slot of `objects` (-1 - info),
 * which holds every other value: longer strings, MutableStrings, lists, hashes, sets, sorted
 * sets, Bloom filters. key info is likewise an inline key's length, or the `objects` slot of a
 * longer key. Entries are allocated in 8-byte steps from slabs, with a free list per size. The first
 * slab is small and each next one twice the size, up to 1 MiB, so a table of a few hundred
 * entries (a large set or hash's members use one too) does not cost a megabyte.
 *
 * The table probes linearly, stores each key's hash beside its entry's position (so a probe
 * that meets another key rarely reads that key's entry), keeps its load at most 1/2, and deletes
 * by shifting the rest of the probe run back instead of leaving tombstones. The hash is FNV-1a
 * seeded per process, then mixed.
 *
 * It grows and shrinks a step at a time, as Redis rehashes its dicts: a resize makes the new slots
 * and leaves the keys in the old ones, and each change to the table then moves the keys of the
 * next few old slots across (growStepSlots, shrinkStepSlots), so that no command pays for copying
 * the whole table (at 4M keys that copy held the event loop 160-190 ms; a step is a few
 * microseconds). Until the old slots are empty, a key is in exactly one of the two: lookups try
 * the new slots and then the old, a change to a key still in the old slots moves it across first,
 * new keys go to the new slots, and the old slots left behind are marked MOVED rather than
 * emptied, so that the probe runs through them still reach the keys after them. Lookups move
 * nothing, so that reads with no change between them see the keys in one order (HKEYS, then
 * HVALS); a table no change comes to is moved on by a timer (active-rehash.ts).
 */
import { decimalDigits, type Latin1Buffer, writeDecimal, writeLatin1 } from "../text/write-bytes.ts";
import { arrayBytes, objectBytes, sampledBytes, stringBytes } from "./memory-sizes.ts";

/** Keys up to this long are stored in their entry; longer ones are held as JS strings. */
export const keyInlineBytesMax = 256;
/** String values up to this long are stored in their entry; longer ones as JS strings. */
export const valueInlineBytesMax = 64;

const headerBytes = 24;
/** Where an entry's expiry sits, in float64s from the entry's start (after the four int32s). */
const expiryFloat = 2;
const unitBytes = 8;
/** The first slab's size; each next slab is twice the last, up to slabBytesMax. */
const slabBytesMin = 4 * 1024;
const slabBytesMax = 1024 * 1024;
/** Entry offsets inside a slab, in units: a ref is slab << unitShift | unit offset. */
const unitShift = 17;
const unitMask = (1 << unitShift) - 1;
/** Refs are positive int32s, so 2^31 / 2^17 slabs of at most 1 MiB: 16 GiB of entries. */
const slabsMax = 2 ** (31 - unitShift);
const entryBytesMax = headerBytes + keyInlineBytesMax + valueInlineBytesMax;
/** The fewest slots a table has (a power of two). */
const capacityMin = 16;
const MINUS = 0x2d;
/** Empty slots hold hash 0; a key whose hash is 0 is given 1 instead. */
const EMPTY = 0;
/** An old slot whose key has moved to the new slots during a resize; a key whose hash is -1 is given 1. */
const MOVED = -1;
/**
 * Old slots whose keys move across per change to the table while it grows. The next resize is at
 * least a quarter of the old slots' number of changes away (a shrink, at a quarter of the new
 * slots full), so four would finish in time; 32 (some 16 keys, 1-3 µs) ends the time in which
 * every new key is looked for in both sets of slots and the old ones' memory is held 8 times
 * sooner. Larger steps measured no faster overall, only slower at the tail.
 */
const growStepSlots = 32;
/**
 * The same while it shrinks: it started at an eighth of the old slots full, and the next shrink is
 * a sixteenth of their number of deletes away, so at least 16; 64 for the same reasons.
 */
const shrinkStepSlots = 64;

/** Per process, so that which keys collide cannot be worked out in advance. */
const hashSeed = (Math.random() * 2 ** 32) | 0;

/** The key's hash: FNV-1a over its chars (bytes), then a final mix; never 0. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5 ^ hashSeed;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return mixHash(h);
}

/** hashKey of the latin1 string bytes[from, to), without making the string. */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5 ^ hashSeed;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return mixHash(h);
}

function mixHash(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h === EMPTY || h === MOVED ? 1 : h;
}

/** The cursor after `cursor` in a SCAN walk of slots of `mask`: its masked bits, reversed, plus one. */
const nextCursor = (cursor: number, mask: number) => reverseBits((reverseBits((cursor | ~mask) >>> 0) + 1) >>> 0);

/** The bits of a 32-bit number in reverse order (SCAN's cursor increments from the top bit). */
function reverseBits(v: number): number {
  v = ((v >>> 1) & 0x55555555) | ((v & 0x55555555) << 1);
  v = ((v >>> 2) & 0x33333333) | ((v & 0x33333333) << 2);
  v = ((v >>> 4) & 0x0f0f0f0f) | ((v & 0x0f0f0f0f) << 4);
  v = ((v >>> 8) & 0x00ff00ff) | ((v & 0x00ff00ff) << 8);
  return ((v >>> 16) | (v << 16)) >>> 0;
}

/**
 * Home slots a block walk (blockRefsStep) takes at once: a run of them shares cache lines, where
 * SCAN's order reads a line or two for each home. capacityMin, so that every table holds whole
 * blocks.
 */
export const blockSlots = capacityMin;

/**
 * The cursor after `cursor` in a walk of `mask`'s slots `width` (a power of two) homes at a
 * time: SCAN's order over the bits above a step's; width 1 is SCAN's own.
 */
const nextWalkCursor = (cursor: number, mask: number, width: number) => nextCursor(cursor | (width - 1), mask) & ~(width - 1);

/**
 * Adds to `out` the refs in `slots` (of `mask`) of the entries homed in [from, to) (to ≤ the
 * slots' number): an entry sits at or after its home, within its run, so the slots from `from` up
 * to the first free one at or after `to - 1` (wrapping round the end) hold all of them.
 */
function refsHomedIn(slots: Int32Array, mask: number, from: number, to: number, out: number[]): void {
  for (let i = from; i < from + mask + 1; i++) {
    const hash = slots[(i & mask) * 2]!;
    if (hash === EMPTY) {
      // No run goes on past a free slot: beyond it only homes after it are left.
      if (i + 1 >= to) return;
      continue;
    }
    if (hash === MOVED) continue;
    const home = hash & mask;
    if (home >= from && home < to) out.push(slots[(i & mask) * 2 + 1]!);
  }
}

/** Where the header of the entry at `ref` starts, in int32s of its slab. */
const headerAt = (ref: number) => ((ref & unitMask) * unitBytes) >> 2;

const isInlineValue = (value: unknown): value is string => typeof value === "string" && value.length <= valueInlineBytesMax;

/** Keys warm() takes from one batch at most. */
export const warmKeysMax = 256;
/** itemsHomedIn's refs, reused from call to call. */
const homedScratch: number[] = [];
/** scanStep's refs, reused from call to call. */
const scanScratch: number[] = [];
/** warm()'s home slots, then refs, of one batch. */
const warmScratch = new Int32Array(warmKeysMax);

/** Entries sit at any 8-byte unit after a key of any length: floats go through these to be read. */
const floatScratch = new Float64Array(1);
const floatBytes = new Uint8Array(floatScratch.buffer);

const entryBytes = (keyBytes: number, valueBytes: number) => (headerBytes + keyBytes + valueBytes + unitBytes - 1) & ~(unitBytes - 1);

/**
 * `V` is what the values are: strings (short ones stored inline) or objects. The keyspace's
 * table holds every kind of value; a large set's or hash's members table holds strings.
 */
export class KeyTable<V extends string | object = string | object> {
  /** Live keys. */
  size = 0;
  /** Two int32s per slot: the key's hash (EMPTY for a free slot) and its entry's ref. */
  private slots = new Int32Array(capacityMin * 2);
  private mask = capacityMin - 1;
  /** While the table resizes: the slots it is leaving (see the top), else null. */
  private oldSlots: Int32Array | null = null;
  private oldMask = 0;
  /** The next old slot to move across. */
  private rehashFrom = 0;
  /** Old slots moved across per change to the table, for this resize. */
  private stepSlots = growStepSlots;
  /** Keys still in the old slots. */
  private oldLive = 0;
  private readonly slabs: Latin1Buffer[] = [];
  /** The same memory as `slabs`, as int32s, for the header. */
  private readonly words: Int32Array[] = [];
  /** The same memory again, as float64s, for the header's expiry (entries start 8-byte aligned). */
  private readonly floats: Float64Array[] = [];
  /** Where the next entry goes in the last slab. */
  private slabTop = 0;
  /** The size of the last slab (0 before the first). */
  private slabEnd = 0;
  /** Per entry size (in units), the ref of the first free entry, or -1. */
  private readonly freeHeads = new Int32Array(entryBytesMax / unitBytes + 1).fill(-1);
  private readonly objects: unknown[] = [];
  private readonly freeObjects: number[] = [];
  /**
   * Set while something walks the slots in order and needs every key to stay at its home slot's
   * place in that order (an append-only file rewrite): the table then does not shrink, and calls
   * this just before it has to grow, so that the walker can finish first.
   */
  slotWalker: (() => void) | null = null;
  /**
   * Which slabs (by index) this table shares with a snapshot: each is copied before this table
   * first writes to it, so the other side keeps the bytes it had. null while none is shared.
   */
  private sharedSlabs: Uint8Array | null = null;

  /** The number of slots (a power of two). */
  get capacity(): number {
    return this.mask + 1;
  }

  /** The ref of `key`'s entry, or -1. */
  find(key: string): number {
    const hash = hashKey(key);
    const slot = this.slotOf(key, hash);
    if (slot >= 0) return this.slots[slot * 2 + 1]!;
    const old = this.oldSlots;
    if (old === null) return -1;
    const oldSlot = this.oldSlotOf(key, hash);
    return oldSlot < 0 ? -1 : old[oldSlot * 2 + 1]!;
  }

  /** Whether a resize is moving keys from the old slots to the new. */
  get resizing(): boolean {
    return this.oldSlots !== null;
  }

  /** The (new) slot holding `key`, or -1 - the free slot where it would go. */
  private slotOf(key: string, hash: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const h = slots[i * 2]!;
      if (h === EMPTY) return -1 - i;
      if (h === hash && this.keyIs(slots[i * 2 + 1]!, key)) return i;
    }
  }

  /** The old slot holding `key` while the table resizes, or -1. MOVED slots are passed over. */
  private oldSlotOf(key: string, hash: number): number {
    const slots = this.oldSlots!;
    const mask = this.oldMask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const h = slots[i * 2]!;
      if (h === EMPTY) return -1;
      if (h === hash && this.keyIs(slots[i * 2 + 1]!, key)) return i;
    }
  }

  /**
   * For a change to `key`: slotOf, after a step of the resize, and with the key moved to the new
   * slots first if it is still in the old ones.
   */
  private slotForChange(key: string, hash: number): number {
    if (this.oldSlots !== null) this.rehashStep(this.stepSlots);
    const slot = this.slotOf(key, hash);
    if (slot >= 0 || this.oldSlots === null) return slot;
    const oldSlot = this.oldSlotOf(key, hash);
    if (oldSlot < 0) return slot;
    const free = -1 - slot;
    this.moveAcross(oldSlot, free);
    return free;
  }

  /** Moves the key of old slot `from` to the free new slot `to`. */
  private moveAcross(from: number, to: number): void {
    const old = this.oldSlots!;
    this.slots[to * 2] = old[from * 2]!;
    this.slots[to * 2 + 1] = old[from * 2 + 1]!;
    this.vacateOld(from);
  }

  /**
   * Marks old slot `slot` MOVED, not EMPTY, so that the probe runs through it still reach the keys
   * after it; the resize ends with the last key to leave.
   */
  private vacateOld(slot: number): void {
    this.oldSlots![slot * 2] = MOVED;
    if (--this.oldLive === 0) this.oldSlots = null;
  }

  /** The slot of `slots` (of `mask`) holding the key bytes[from, from + length), or -1 - the free slot where it would go. */
  private slotOfBytes(slots: Int32Array, mask: number, hash: number, bytes: Uint8Array, from: number, length: number): number {
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const h = slots[i * 2]!;
      if (h === EMPTY) return -1 - i;
      if (h === hash && this.keyIsBytes(slots[i * 2 + 1]!, bytes, from, length)) return i;
    }
  }

  private keyIsBytes(ref: number, bytes: Uint8Array, from: number, length: number): boolean {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    if (info !== length) return false;
    const slab = this.slabs[ref >>> unitShift]!;
    const at = (ref & unitMask) * unitBytes + headerBytes;
    for (let i = 0; i < length; i++) if (slab[at + i] !== bytes[from + i]) return false;
    return true;
  }

  private keyIs(ref: number, key: string): boolean {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    if (info < 0) return this.objects[-1 - info] === key;
    if (info !== key.length) return false;
    const bytes = this.slabs[ref >>> unitShift]!;
    const from = (ref & unitMask) * unitBytes + headerBytes;
    for (let i = 0; i < info; i++) if (bytes[from + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /**
   * Sets `key` to `value`, adding the key if it is new (its read time is then 0: never read);
   * returns whether it was new.
   */
  set(key: string, value: V): boolean {
    const size = this.size;
    this.setRef(key, value);
    return this.size > size;
  }

  /** Like set, and returns the entry's ref (a new one when the value's size moved the entry). */
  setRef(key: string, value: V): number {
    const hash = hashKey(key);
    const slot = this.slotForChange(key, hash);
    if (slot < 0) return this.addAt(key, hash, value, slot);
    const ref = this.replaceValue(this.slots[slot * 2 + 1]!, value);
    this.slots[slot * 2 + 1] = ref;
    return ref;
  }

  /**
   * The ref of `key`'s entry if it has one; otherwise adds it with `value` and returns -1 - the
   * new entry's ref. One lookup for a caller that then works on the entry either way.
   */
  findOrAdd(key: string, value: V): number {
    const hash = hashKey(key);
    const slot = this.slotForChange(key, hash);
    return slot >= 0 ? this.slots[slot * 2 + 1]! : -1 - this.addAt(key, hash, value, slot);
  }

  /** Adds a new key at the free slot slotOf found for it (-1 - slot); returns its entry's ref. */
  private addAt(key: string, hash: number, value: V, slot: number): number {
    // After a resize the key is in neither the old slots nor the new: slotOf gives its free slot.
    if (this.makeRoomForOne()) slot = this.slotOf(key, hash);
    return this.add(key, hash, value, -1 - slot);
  }

  /**
   * Before a new key goes in: doubles the slots if it would fill more than half of them. Returns
   * whether it did, in which case a free slot found before is stale and must be found again.
   */
  private makeRoomForOne(): boolean {
    if ((this.size + 1) * 2 <= this.capacity) return false;
    this.slotWalker?.();
    this.resize(this.capacity * 2);
    return true;
  }

  private add(key: string, hash: number, value: V, slot: number): number {
    const keyInline = key.length <= keyInlineBytesMax;
    const valueInline = isInlineValue(value);
    const ref = this.newEntry(hash, keyInline ? key.length : 0, valueInline ? value.length : 0);
    this.words[ref >>> unitShift]![headerAt(ref) + 3] = keyInline ? key.length : -1 - this.hold(key);
    if (keyInline) writeLatin1(this.slabs[ref >>> unitShift]!, (ref & unitMask) * unitBytes + headerBytes, key);
    this.writeValue(ref, value, valueInline);
    this.fillSlot(slot, hash, ref);
    return ref;
  }

  /**
   * Adds the key bytes[keyFrom, keyTo) with the string value bytes[valueFrom, valueTo), copied
   * straight into a new entry, and returns true; or returns false, changing nothing, when the key
   * is already here or either is too long to sit in an entry: the caller then sets them as
   * strings. The loader's path for MSET (aof/load.ts): no string is made on the way in.
   */
  addBytes(bytes: Uint8Array, keyFrom: number, keyTo: number, valueFrom: number, valueTo: number): boolean {
    const keyLength = keyTo - keyFrom;
    const valueLength = valueTo - valueFrom;
    if (keyLength > keyInlineBytesMax || valueLength > valueInlineBytesMax) return false;
    const hash = hashBytes(bytes, keyFrom, keyTo);
    if (this.oldSlots !== null) this.rehashStep(this.stepSlots);
    if (this.oldSlots !== null && this.slotOfBytes(this.oldSlots, this.oldMask, hash, bytes, keyFrom, keyLength) >= 0) return false;
    let slot = this.slotOfBytes(this.slots, this.mask, hash, bytes, keyFrom, keyLength);
    if (slot >= 0) return false;
    if (this.makeRoomForOne()) slot = this.slotOfBytes(this.slots, this.mask, hash, bytes, keyFrom, keyLength);
    const ref = this.newEntry(hash, keyLength, valueLength);
    const words = this.words[ref >>> unitShift]!;
    words[headerAt(ref) + 2] = valueLength;
    words[headerAt(ref) + 3] = keyLength;
    const slab = this.slabs[ref >>> unitShift]!;
    const at = (ref & unitMask) * unitBytes + headerBytes;
    // Byte by byte: for a few bytes this beats making a subarray to copy from.
    for (let i = 0; i < keyLength; i++) slab[at + i] = bytes[keyFrom + i]!;
    for (let i = 0; i < valueLength; i++) slab[at + keyLength + i] = bytes[valueFrom + i]!;
    this.fillSlot(-1 - slot, hash, ref);
    return true;
  }

  /** A new entry with room for `keyBytes` and `valueBytes` inline: its hash written, never read, no time. */
  private newEntry(hash: number, keyBytes: number, valueBytes: number): number {
    const ref = this.allocate(entryBytes(keyBytes, valueBytes));
    this.own(ref);
    const words = this.words[ref >>> unitShift]!;
    words[headerAt(ref)] = hash;
    words[headerAt(ref) + 1] = 0;
    this.floats[ref >>> unitShift]![(ref & unitMask) + expiryFloat] = Infinity;
    return ref;
  }

  /** Puts a new key's hash and entry in free slot `slot`. */
  private fillSlot(slot: number, hash: number, ref: number): void {
    this.slots[slot * 2] = hash;
    this.slots[slot * 2 + 1] = ref;
    this.size++;
  }

  /** Writes an entry's value info and inline bytes; the key's info must already be written. */
  private writeValue(ref: number, value: V, inline: boolean): void {
    this.own(ref);
    const words = this.words[ref >>> unitShift]!;
    if (inline) {
      const text = value as string;
      words[headerAt(ref) + 2] = text.length;
      writeLatin1(this.slabs[ref >>> unitShift]!, this.valueAt(ref), text);
    } else words[headerAt(ref) + 2] = -1 - this.hold(value);
  }

  /**
   * Gives the entry at `ref` a new value if that leaves its size unchanged (INCR's usual case:
   * entries grow in 8-byte steps); false, changing nothing, if it does not.
   */
  setValueInPlace(ref: number, value: V): boolean {
    const inline = isInlineValue(value);
    if (entryBytes(this.keyBytesOf(ref), inline ? value.length : 0) !== this.sizeOf(ref)) return false;
    this.releaseValue(ref);
    this.writeValue(ref, value, inline);
    return true;
  }

  /**
   * Stores the decimal text of the integer `n` (|n| < 2^53) as the entry's value if that leaves
   * its size unchanged; false, changing nothing, if it does not. INCR's path: no string is made.
   */
  setIntegerInPlace(ref: number, n: number): boolean {
    const magnitude = Math.abs(n);
    const length = (n < 0 ? 1 : 0) + decimalDigits(magnitude);
    if (this.valueLength(ref) === -1 || entryBytes(this.keyBytesOf(ref), length) !== this.sizeOf(ref)) return false;
    this.own(ref);
    this.words[ref >>> unitShift]![headerAt(ref) + 2] = length;
    const bytes = this.slabs[ref >>> unitShift]!;
    const from = this.valueAt(ref);
    if (n < 0) bytes[from] = MINUS;
    writeDecimal(bytes, n < 0 ? from + 1 : from, magnitude);
    return true;
  }

  /** Gives the entry at `ref` a new value, moving it if its size changes; returns its ref. */
  private replaceValue(ref: number, value: V): number {
    if (this.setValueInPlace(ref, value)) return ref;
    const inline = isInlineValue(value);
    const keyBytes = this.keyBytesOf(ref);
    const oldSize = this.sizeOf(ref);
    this.releaseValue(ref);
    const moved = this.allocate(entryBytes(keyBytes, inline ? value.length : 0));
    const from = (ref & unitMask) * unitBytes;
    const header = this.slabs[ref >>> unitShift]!.subarray(from, from + headerBytes + keyBytes);
    this.own(moved);
    this.slabs[moved >>> unitShift]!.set(header, (moved & unitMask) * unitBytes);
    this.writeValue(moved, value, inline);
    this.free(ref, oldSize);
    return moved;
  }

  /** The bytes of the entry's inline key (0 for a key held as an object). */
  private keyBytesOf(ref: number): number {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    return info < 0 ? 0 : info;
  }

  /** The entry's size in bytes, from its header. */
  private sizeOf(ref: number): number {
    return entryBytes(this.keyBytesOf(ref), Math.max(0, this.valueLength(ref)));
  }

  /** Releases the object the entry's value is, if it is one. */
  private releaseValue(ref: number): void {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 2]!;
    if (info < 0) this.release(-1 - info);
  }

  /** Removes `key`; returns whether it was there. */
  delete(key: string): boolean {
    const hash = hashKey(key);
    if (this.oldSlots !== null) this.rehashStep(this.stepSlots);
    let hole = this.slotOf(key, hash);
    if (hole < 0) return this.oldSlots !== null && this.deleteOld(key, hash);
    this.freeEntry(this.slots[hole * 2 + 1]!);
    // Shift back each later entry of the run that may live in the hole (its home is not
    // cyclically within (hole, j]), so that every key stays reachable from its home slot.
    const slots = this.slots;
    const mask = this.mask;
    for (let j = (hole + 1) & mask; slots[j * 2] !== EMPTY; j = (j + 1) & mask) {
      const home = slots[j * 2]! & mask;
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      slots[hole * 2] = slots[j * 2]!;
      slots[hole * 2 + 1] = slots[j * 2 + 1]!;
      hole = j;
    }
    slots[hole * 2] = EMPTY;
    this.size--;
    this.shrinkIfSparse();
    return true;
  }

  /** Removes `key` from the old slots, if it is there (it is in no new one). */
  private deleteOld(key: string, hash: number): boolean {
    const slot = this.oldSlotOf(key, hash);
    if (slot < 0) return false;
    this.freeEntry(this.oldSlots![slot * 2 + 1]!);
    this.size--;
    this.vacateOld(slot);
    return true;
  }

  /** Halves the slots once the table is an eighth full (not while a walk or a resize is on). */
  private shrinkIfSparse(): void {
    if (this.size * 8 < this.capacity && this.capacity > capacityMin && this.slotWalker === null && this.oldSlots === null) {
      this.resize(this.capacity / 2);
    }
  }

  /**
   * A copy to read while this table changes (an append-only file rewrite writing the rest of a
   * large hash or set): the slots are copied, so every entry keeps its slot and a walk in slot
   * order goes on in the copy where it left off here. The slabs are shared, and whichever side
   * writes to one first copies it then (sharedSlabs), so making the copy costs the slots alone and
   * writes afterwards copy only the slabs they touch, 1 MiB at most each. Copying every slab at
   * once held the event loop 20–54 ms for an 860k-member set, mostly the allocation's garbage
   * collection. Values held as objects are shared, not copied (a members table's are strings).
   */
  snapshot(): KeyTable<V> {
    this.settle();
    const copy = new KeyTable<V>();
    copy.size = this.size;
    copy.slots = this.slots.slice();
    copy.mask = this.mask;
    for (let i = 0; i < this.slabs.length; i++) {
      copy.slabs.push(this.slabs[i]!);
      copy.words.push(this.words[i]!);
      copy.floats.push(this.floats[i]!);
    }
    this.sharedSlabs = new Uint8Array(this.slabs.length).fill(1);
    copy.sharedSlabs = new Uint8Array(this.slabs.length).fill(1);
    copy.slabTop = this.slabTop;
    copy.slabEnd = this.slabEnd;
    copy.freeHeads.set(this.freeHeads);
    for (const object of this.objects) copy.objects.push(object);
    for (const index of this.freeObjects) copy.freeObjects.push(index);
    return copy;
  }

  /** Makes the slab holding `ref` this table's own before it writes there (see sharedSlabs). */
  private own(ref: number): void {
    const shared = this.sharedSlabs;
    if (shared === null) return;
    const slab = ref >>> unitShift;
    if (shared[slab] !== 1) return;
    shared[slab] = 0;
    const memory = this.words[slab]!.buffer.slice(0);
    this.slabs[slab] = Buffer.from(memory) as Latin1Buffer;
    this.words[slab] = new Int32Array(memory);
    this.floats[slab] = new Float64Array(memory);
  }

  /** Removes every key. */
  clear(): void {
    this.size = 0;
    this.slots = new Int32Array(capacityMin * 2);
    this.mask = capacityMin - 1;
    this.oldSlots = null;
    this.oldLive = 0;
    this.slabs.length = this.words.length = this.floats.length = 0;
    this.sharedSlabs = null;
    this.slabTop = this.slabEnd = 0;
    this.freeHeads.fill(-1);
    this.objects.length = this.freeObjects.length = 0;
  }

  /**
   * Starts moving to `capacity` slots: the keys stay in the old slots until changes to the table
   * move them across (rehashStep). A resize still under way is finished first.
   */
  private resize(capacity: number): void {
    this.settle();
    if (this.size === 0) {
      this.slots = new Int32Array(capacity * 2);
      this.mask = capacity - 1;
      return;
    }
    this.oldSlots = this.slots;
    this.oldMask = this.mask;
    this.rehashFrom = 0;
    this.oldLive = this.size;
    this.stepSlots = capacity > this.capacity ? growStepSlots : shrinkStepSlots;
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  /** Moves the keys of the next `count` old slots to the new ones; the resize ends with the last. */
  private rehashStep(count: number): void {
    const old = this.oldSlots!;
    const slots = this.slots;
    const mask = this.mask;
    const end = Math.min(this.rehashFrom + count, this.oldMask + 1);
    for (let i = this.rehashFrom; i < end; i++) {
      const hash = old[i * 2]!;
      if (hash === EMPTY || hash === MOVED) continue;
      let j = hash & mask;
      while (slots[j * 2] !== EMPTY) j = (j + 1) & mask;
      slots[j * 2] = hash;
      slots[j * 2 + 1] = old[i * 2 + 1]!;
      old[i * 2] = MOVED;
      this.oldLive--;
    }
    this.rehashFrom = end;
    if (this.oldLive === 0 || end === this.oldMask + 1) this.oldSlots = null;
  }

  /**
   * Moves a resize under way on by `count` old slots, for a table that is not changing (Redis's
   * activerehashing); returns whether it is still under way.
   */
  resizeStep(count: number): boolean {
    if (this.oldSlots !== null) this.rehashStep(count);
    return this.oldSlots !== null;
  }

  /** Finishes a resize under way, at once: for what needs the keys in one set of slots. */
  settle(): void {
    if (this.oldSlots !== null) this.rehashStep(this.oldMask + 1);
  }

  // ---- reading an entry --------------------------------------------------------------------------

  /** The key of the entry at `ref`. */
  keyOf(ref: number): string {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    if (info < 0) return this.objects[-1 - info] as string;
    const from = (ref & unitMask) * unitBytes + headerBytes;
    return this.slabs[ref >>> unitShift]!.latin1Slice(from, from + info);
  }

  /** The length of the entry's inline key, or -1 when its key is held as an object. */
  keyLength(ref: number): number {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    return info < 0 ? -1 : info;
  }

  /** Where the entry's inline key starts in bytesOf(ref). */
  keyAt(ref: number): number {
    return (ref & unitMask) * unitBytes + headerBytes;
  }

  /** The hash of the entry's key (hashKey's). */
  hashOf(ref: number): number {
    return this.words[ref >>> unitShift]![headerAt(ref)]!;
  }

  /** The value of the entry at `ref`; an inline string is copied out as a new JS string. */
  valueOf(ref: number): V {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 2]!;
    if (info < 0) return this.objects[-1 - info] as V;
    const from = this.valueAt(ref);
    return this.slabs[ref >>> unitShift]!.latin1Slice(from, from + info) as V;
  }

  /** The length of the entry's inline string value, or -1 when its value is held as an object. */
  valueLength(ref: number): number {
    const info = this.words[ref >>> unitShift]![headerAt(ref) + 2]!;
    return info < 0 ? -1 : info;
  }

  /** The slab holding the entry at `ref`: its inline value is bytesOf(ref)[valueAt(ref), + valueLength(ref)). */
  bytesOf(ref: number): Uint8Array {
    return this.slabs[ref >>> unitShift]!;
  }

  /** Where the entry's inline value starts in bytesOf(ref). */
  valueAt(ref: number): number {
    return (ref & unitMask) * unitBytes + headerBytes + this.keyBytesOf(ref);
  }

  /**
   * The float64 whose 8 bytes are the entry's inline value (a sorted set's score: see
   * zset/score-index.ts, which stores every value so).
   */
  floatAt(ref: number): number {
    const bytes = this.slabs[ref >>> unitShift]!;
    const from = this.valueAt(ref);
    for (let i = 0; i < 8; i++) floatBytes[i] = bytes[from + i]!;
    return floatScratch[0]!;
  }

  /** Writes a float64 as the entry's 8-byte inline value, which it must already have. */
  setFloatAt(ref: number, n: number): void {
    this.own(ref);
    const bytes = this.slabs[ref >>> unitShift]!;
    const from = this.valueAt(ref);
    floatScratch[0] = n;
    for (let i = 0; i < 8; i++) bytes[from + i] = floatBytes[i]!;
  }

  /** The entry's expiry, a Unix ms time, or Infinity when it has none (kept by the keyspace). */
  expiresAt(ref: number): number {
    return this.floats[ref >>> unitShift]![(ref & unitMask) + expiryFloat]!;
  }

  setExpiresAt(ref: number, atMs: number): void {
    this.own(ref);
    this.floats[ref >>> unitShift]![(ref & unitMask) + expiryFloat] = atMs;
  }

  /** The entry's last-read time as the keyspace recorded it (0: never read). */
  readTime(ref: number): number {
    return this.words[ref >>> unitShift]![headerAt(ref) + 1]!;
  }

  setReadTime(ref: number, time: number): void {
    this.own(ref);
    this.words[ref >>> unitShift]![headerAt(ref) + 1] = time;
  }

  // ---- walking the keys --------------------------------------------------------------------------

  /** The slots keys are in: the new ones, and mid-resize the old ones first. */
  private get slotSets(): Int32Array[] {
    return this.oldSlots === null ? [this.slots] : [this.oldSlots, this.slots];
  }

  /** Every key, in slot order (a snapshot: the table may change while the caller uses it). */
  keys(): string[] {
    const keys: string[] = [];
    for (const slots of this.slotSets) {
      for (let i = 0; i < slots.length; i += 2) if (slots[i] !== EMPTY && slots[i] !== MOVED) keys.push(this.keyOf(slots[i + 1]!));
    }
    return keys;
  }

  /**
   * Every key in slot order, read as the walk goes, without keys()'s copy: nothing may change the
   * table until the walk ends.
   */
  *walkKeys(): Generator<string> {
    for (const ref of this.walkRefs()) yield this.keyOf(ref);
  }

  /** walkKeys, giving each entry's ref rather than its key (no string is made). */
  *walkRefs(): Generator<number> {
    for (const slots of this.slotSets) {
      for (let i = 0; i < slots.length; i += 2) if (slots[i] !== EMPTY && slots[i] !== MOVED) yield slots[i + 1]!;
    }
  }

  /**
   * One step of a SCAN-style walk: adds to `out` the keys whose home slot is `cursor`'s, and
   * returns the next cursor (0 when the walk is complete). The cursor counts with its bits
   * reversed, as Redis's dictScan does, so a walk that started before the table grew or shrank
   * still visits every key that was there throughout: the slots already visited map onto a
   * prefix of the new order.
   */
  scanStep(cursor: number, out: string[]): number {
    const refs = scanScratch;
    const next = this.scanRefsStep(cursor, refs);
    for (const ref of refs) out.push(this.keyOf(ref));
    refs.length = 0;
    return next;
  }

  /** scanStep, adding the entries' refs to `out` rather than their keys (no string is made). */
  scanRefsStep(cursor: number, out: number[]): number {
    return this.walkStep(cursor, out, 1);
  }

  /**
   * scanRefsStep a block of blockSlots home slots at a time: a walk with the same promise (every
   * entry present throughout is met, across resizes, as Redis's dictScan promises), in steps of
   * 16 homes whose slots are read front to back. The active expiry cycle walks the whole table so;
   * in SCAN's order each home was a cache miss of its own. `cursor` is 0 to start, and 0 again
   * once the walk is complete.
   */
  blockRefsStep(cursor: number, out: number[]): number {
    return this.walkStep(cursor, out, blockSlots);
  }

  /** One step of a SCAN-order walk, `width` homes at a time (scanRefsStep, blockRefsStep). */
  private walkStep(cursor: number, out: number[], width: number): number {
    if (this.oldSlots === null) {
      const from = cursor & this.mask;
      refsHomedIn(this.slots, this.mask, from, from + width, out);
      return nextWalkCursor(cursor, this.mask, width);
    }
    // Mid-resize, as Redis's dictScan mid-rehash: the smaller set of slots' homes for the cursor,
    // then every step of homes in the larger set that reduces to them; the cursor counts in the
    // smaller.
    const oldIsSmaller = this.oldMask < this.mask;
    const [small, smallMask] = oldIsSmaller ? [this.oldSlots, this.oldMask] : [this.slots, this.mask];
    const [large, largeMask] = oldIsSmaller ? [this.slots, this.mask] : [this.oldSlots, this.oldMask];
    const smallFrom = cursor & smallMask;
    refsHomedIn(small, smallMask, smallFrom, smallFrom + width, out);
    let v = cursor;
    do {
      const from = v & largeMask;
      refsHomedIn(large, largeMask, from, from + width, out);
      v = nextWalkCursor(v, largeMask, width);
    } while ((v & (smallMask ^ largeMask)) !== 0);
    // The larger set's extra bits have wrapped to 0, carrying one into the smaller's: v is next.
    return v;
  }

  /**
   * Adds to `out` the refs of the entries whose home slot is in [from, to) (to ≤ capacity): one
   * step of a walk in slot order, which reads the slots front to back rather than scanStep's
   * scattered order, but is only complete while the table neither grows nor shrinks
   * (slotWalker).
   */
  entriesHomedIn(from: number, to: number, out: number[]): void {
    // A walk in slot order needs every key in the slots it walks.
    this.settle();
    refsHomedIn(this.slots, this.mask, from, to, out);
  }

  /**
   * Adds to `out` the key of each entry homed in slots [from, to), and its value after it when
   * `withValues` (a members table's values are strings): entriesHomedIn's walk, read out for a
   * caller that writes them (an append-only file rewrite of a large hash or set).
   */
  itemsHomedIn(from: number, to: number, out: (string | V)[], withValues: boolean): void {
    const refs = homedScratch;
    this.entriesHomedIn(from, to, refs);
    for (const ref of refs) {
      out.push(this.keyOf(ref));
      if (withValues) out.push(this.valueOf(ref));
    }
    refs.length = 0;
  }

  /**
   * Reads, and so brings into the CPU's cache, the home slot of each of the first `count` keys
   * and the entry found there (for a batch of pipelined commands, before they run). A lookup's
   * time is mostly two cache misses, slot then entry, each waiting on the one before; here the
   * loads of many keys do not depend on each other, so the CPU overlaps their misses, and the
   * lookups that follow find both in cache. Changes nothing; returns whether any entry read holds
   * its value as an object (a collection, say), for a caller that would warm those too.
   */
  warm(keys: readonly string[], count: number): boolean {
    const n = Math.min(count, warmKeysMax);
    const homes = warmScratch;
    const slots = this.slots;
    const mask = this.mask;
    for (let i = 0; i < n; i++) homes[i] = hashKey(keys[i]!) & mask;
    for (let i = 0; i < n; i++) {
      const home = homes[i]!;
      // Empty: no entry to read (and the key is not in the table).
      homes[i] = slots[home * 2] !== EMPTY ? slots[home * 2 + 1]! : -1;
    }
    let objects = false;
    for (let i = 0; i < n; i++) {
      const ref = homes[i]!;
      if (ref >= 0 && this.words[ref >>> unitShift]![headerAt(ref) + 2]! < 0) objects = true;
    }
    return objects;
  }

  /**
   * Before a batch of keys is added from bytes (`ranges`: key from, key to, value from, value to,
   * … as the loader keeps an MSET's): reads the home slot of each, so that the cache misses
   * overlap instead of coming one insert at a time.
   */
  warmBytes(bytes: Uint8Array, ranges: readonly number[]): void {
    const n = Math.min(ranges.length / 4, warmKeysMax);
    const homes = warmScratch;
    const slots = this.slots;
    const mask = this.mask;
    for (let i = 0; i < n; i++) homes[i] = hashBytes(bytes, ranges[i * 4]!, ranges[i * 4 + 1]!) & mask;
    for (let i = 0; i < n; i++) homes[i] = slots[homes[i]! * 2]!;
  }

  /** A uniformly random slot's key, or the next one after it; undefined when empty. */
  randomKey(): string | undefined {
    if (this.size === 0) return undefined;
    // Mid-resize, each set of slots is picked as often as it holds keys.
    const inOld = this.oldSlots !== null && Math.random() * this.size < this.oldLive;
    const slots = inOld ? this.oldSlots! : this.slots;
    const mask = inOld ? this.oldMask : this.mask;
    let i = Math.floor(Math.random() * (mask + 1));
    while (slots[i * 2] === EMPTY || slots[i * 2] === MOVED) i = (i + 1) & mask;
    return this.keyOf(slots[i * 2 + 1]!);
  }

  // ---- memory --------------------------------------------------------------------------------------

  /**
   * Bytes of the entry at `ref` (a key and an inline value), its share of the slots (all of them
   * over the live keys: a half-empty table costs each key two slot pairs), and its key when the
   * key is held as a string of its own; a value held as an object is the caller's to add.
   */
  entryMemoryBytes(ref: number): number {
    const keyHeld = this.keyLength(ref) === -1 ? stringBytes(this.keyOf(ref).length) : 0;
    const slotsShare = Math.round(this.slotBytes / this.size);
    return this.sizeOf(ref) + slotsShare + keyHeld;
  }

  /**
   * Bytes of the whole table (MEMORY USAGE of a large hash, set or sorted set): its slots, its
   * slabs and the objects its entries hold — keys and values too long to be inline — sized by
   * `heldBytes` over the first `samples` of them (0: all).
   */
  memoryBytes(samples: number, heldBytes: (held: unknown) => number): number {
    let bytes = objectBytes(20) + this.slotBytes + arrayBytes(this.objects.length);
    for (const slab of this.slabs) bytes += slab.byteLength;
    const held = this.objects.length - this.freeObjects.length;
    return bytes + sampledBytes(this.heldObjects(), held, samples, heldBytes);
  }

  /** Bytes of the slot arrays: the table's overhead beside its entries (MEMORY STATS). */
  get slotBytes(): number {
    return this.slots.byteLength + (this.oldSlots?.byteLength ?? 0);
  }

  private *heldObjects(): Generator<unknown> {
    for (const object of this.objects) if (object !== undefined) yield object;
  }

  /** Allocates an entry of `bytes` (a multiple of unitBytes); returns its ref. */
  private allocate(bytes: number): number {
    const units = bytes / unitBytes;
    const free = this.freeHeads[units]!;
    if (free !== -1) {
      this.freeHeads[units] = this.words[free >>> unitShift]![headerAt(free)]!;
      return free;
    }
    if (this.slabTop + bytes > this.slabEnd) {
      if (this.slabs.length === slabsMax) throw new RangeError("kv key table is full (16 GiB of entries)");
      // The last slab's unused tail is left behind: at most one largest entry's worth.
      this.slabEnd = this.slabEnd === 0 ? slabBytesMin : Math.min(this.slabEnd * 2, slabBytesMax);
      const memory = new ArrayBuffer(this.slabEnd);
      this.slabs.push(Buffer.from(memory) as Latin1Buffer);
      this.words.push(new Int32Array(memory));
      this.floats.push(new Float64Array(memory));
      this.slabTop = 0;
    }
    const ref = ((this.slabs.length - 1) << unitShift) | (this.slabTop / unitBytes);
    this.slabTop += bytes;
    return ref;
  }

  /** Frees an entry and the objects it holds. */
  private freeEntry(ref: number): void {
    const keyInfo = this.words[ref >>> unitShift]![headerAt(ref) + 3]!;
    if (keyInfo < 0) this.release(-1 - keyInfo);
    this.releaseValue(ref);
    this.free(ref, this.sizeOf(ref));
  }

  /** Puts an entry's memory on its size's free list (the first word links the list). */
  private free(ref: number, bytes: number): void {
    const units = bytes / unitBytes;
    this.own(ref);
    this.words[ref >>> unitShift]![headerAt(ref)] = this.freeHeads[units]!;
    this.freeHeads[units] = ref;
  }

  private hold(object: unknown): number {
    const index = this.freeObjects.pop();
    if (index === undefined) return this.objects.push(object) - 1;
    this.objects[index] = object;
    return index;
  }

  private release(index: number): void {
    this.objects[index] = undefined;
    this.freeObjects.push(index);
  }
}
