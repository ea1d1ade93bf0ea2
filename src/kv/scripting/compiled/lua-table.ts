/**
 * Lua 5.1's table for compiled scripts, laid out as Lua 5.1.5's ltable.c lays it out, so that
 * `next`/`pairs` visit keys in the very order the native Lua does and `#t` picks the very same
 * border: scripts' replies, cjson.encode's key order and table.insert/remove all follow them.
 *
 * The layout, as in ltable.c:
 * - an array part holding keys 1..sizearray;
 * - a hash part of 2^k nodes, each a key, a value and the node its collision chain goes on to.
 *   A key lives at its main position (its hash modulo the size) unless another key took it first;
 *   then it goes to the free node `lastFree` finds moving down from the end, and a colliding key
 *   that is not in its own main position is moved out of the way (Brent's variation);
 * - when no free node is left, a rehash counts the integer keys in power-of-two slices to choose
 *   the array size (the largest n with more than n/2 integer keys in 1..n), sizes the hash part
 *   for the rest, and reinserts: the vanishing array slice first, then the old nodes from the
 *   last to the first.
 * A key set to nil keeps its node (a dead key) so that `next` can go on from it; a node whose
 * value is nil counts as free for a new key whose main position it is.
 *
 * Nodes are one JavaScript array of triples [key, value, next offset] (offset = node index * 3,
 * -1 for the chain's end): one allocation per resize and the three fields side by side.
 *
 * Hashes are Lua 5.1.5's (the native Lua here is unpatched 5.1.5; Redis's own copy hashes every
 * byte of long strings, a difference for strings of 32 bytes or more): strings by luaS_newlstr's
 * hash, numbers by the sum of their two 32-bit halves, booleans as 0/1. Tables and functions
 * hash by an identity number given here (Lua uses their address: that order cannot match, and
 * need not — no one can rely on it).
 *
 * What would not go as in Lua bails (LuaBail): a nil or NaN key, `next` from a key not in the
 * table, a hash part past 2^26 nodes, and setting again a string/table/function key that was set
 * to nil and sits off its main position — there Lua's result depends on whether its garbage
 * collector walked the table meanwhile (it marks such keys dead, and a dead key is not found
 * again, so the key is placed anew).
 */
import { bail, type LuaFunction, type LuaValue } from "./lua-value.ts";

/** Lua's MAXBITS: the array part holds at most 2^26 slots and the hash part 2^26 nodes. */
const sizeBitsMax = 26;
/** Lua's MAXASIZE: integer keys above it never count for the array part. */
const arraySizeMax = 1 << sizeBitsMax;
/** Node fields, as offsets in a node triple (the key is at offset 0: `node[o]`). */
const valueField = 1;
const nextField = 2;
const nodeFields = 3;
/** A chain's end, in a node's next field. */
const noNode = -1;
/** Hash parts up to 2^freshNodeBitsMax nodes are copied from a template when created. */
const freshNodeBitsMax = 8;
/** LFIELDS_PER_FLUSH: a constructor stores its positional items in batches of this many. */
export const constructorFlushItems = 50;

/**
 * The hash part of a table without one (Lua's dummynode): one free node no key is ever written
 * to, since inserting into it always rehashes first.
 */
const dummyNodes: LuaValue[] = [undefined, undefined, noNode];

/** A hash part of `count` free nodes. */
function freshNodeVector(count: number): LuaValue[] {
  const node: LuaValue[] = [];
  for (let i = 0; i < count; i++) node.push(undefined, undefined, noNode);
  return node;
}

/** Free hash parts of the small sizes, copied rather than built (a copy is one memcpy). */
const freshNodes: LuaValue[][] = [];
for (let bits = 0; bits <= freshNodeBitsMax; bits++) freshNodes.push(freshNodeVector(1 << bits));

/** Scratch for a number's two 32-bit halves (little endian, as on x86 and arm64). */
const numberBits = new Float64Array(1);
const numberWords = new Uint32Array(numberBits.buffer);

/** Scratch for rehash: integer keys counted per slice (2^(i-1), 2^i]. */
const sliceCounts = new Int32Array(sizeBitsMax + 1);

/** Identity numbers for tables and functions as keys (Lua hashes their address). */
let identityLast = 0;
const functionIdentities = new WeakMap<LuaFunction, number>();

/** luaS_newlstr's hash of a string of bytes (one char per byte), as a 32-bit integer. */
export function stringHash(s: string): number {
  const length = s.length;
  let h = length;
  // Long strings hash only every step-th byte, from the end.
  const step = (length >> 5) + 1;
  for (let l1 = length; l1 >= step; l1 -= step) h ^= (h << 5) + (h >>> 2) + s.charCodeAt(l1 - 1);
  return h;
}

/**
 * The hashes of strings used as keys lately: looking one up costs less than hashing again, and
 * scripts use the same few names over and over. Bounded (cleared when full); strings longer than
 * hashCacheLengthMax are hashed each time rather than kept alive (their hash reads 32 bytes at most).
 */
const hashCache = new Map<string, number>();
const hashCacheSizeMax = 4096;
const hashCacheLengthMax = 64;

/** stringHash(s), from hashCache when it is there. */
function keyHash(s: string): number {
  let h = hashCache.get(s);
  if (h !== undefined) return h;
  h = stringHash(s);
  if (s.length <= hashCacheLengthMax) {
    if (hashCache.size >= hashCacheSizeMax) hashCache.clear();
    hashCache.set(s, h);
  }
  return h;
}

/** hashnum's value before the modulo: the sum of the double's two 32-bit halves, wrapped. */
function numberHash(n: number): number {
  numberBits[0] = n;
  return (numberWords[0]! + numberWords[1]!) >>> 0;
}

/** ceillog2: the least i with 2^i >= k (k >= 1). */
function ceilLog2(k: number): number {
  return k <= 1 ? 0 : 32 - Math.clz32(k - 1);
}

/** Lua's arrayindex: the key as an int when it is a number with an int's value, else -1. */
function arrayIndex(key: LuaValue): number {
  if (typeof key === "number" && (key | 0) === key) return key | 0;
  return -1;
}

/** luaO_int2fb: a count as OP_NEWTABLE stores it, a "floating point byte" (rounding up). */
export function intToFloatingByte(x: number): number {
  let e = 0;
  while (x >= 16) {
    x = (x + 1) >>> 1;
    e++;
  }
  if (x < 8) return x;
  return ((e + 1) << 3) | (x - 8);
}

/** luaO_fb2int: the count a "floating point byte" stands for. */
export function floatingByteToInt(x: number): number {
  const e = (x >> 3) & 31;
  if (e === 0) return x;
  return ((x & 7) + 8) << (e - 1);
}

export class LuaTable {
  /** The array part: keys 1..arraySize at 0..arraySize-1 (slots past arraySize are stale). */
  private arr: LuaValue[] = [];
  /** Slots in the array part (sizearray); read only outside this class. */
  arraySize = 0;
  /** The hash part: node triples [key, value, next offset]. */
  private node: LuaValue[] = dummyNodes;
  /** Node count - 1 (node counts are powers of two; 0 for the dummy part). */
  private mask = 0;
  /** Offset of the node below which getfreepos looks next. */
  private lastFree = 0;
  /** Changes whenever a key moves or the parts resize: a traversal slot stays valid while it holds. */
  shape = 0;
  /** The identity a table key hashes by. */
  readonly identity = ++identityLast >>> 0;

  /** lua_createtable(arraySize, hashSize). */
  constructor(arraySize = 0, hashSize = 0) {
    if (arraySize > 0) this.growArray(arraySize);
    if (hashSize > 0) this.setNodeVector(hashSize);
  }

  /** The table a constructor `{…}` makes before its items are stored (OP_NEWTABLE's sizes). */
  static forConstructor(positional: number, named: number): LuaTable {
    return new LuaTable(floatingByteToInt(intToFloatingByte(positional)), floatingByteToInt(intToFloatingByte(named)));
  }

  /** An array table of values[from, to): lua_createtable(n, 0), then t[i] = v for i = 1..n. */
  static fromValues(values: readonly LuaValue[], from = 0, to = values.length): LuaTable {
    const count = Math.max(to - from, 0);
    const t = new LuaTable(count, 0);
    const arr = t.arr;
    for (let i = 0; i < count; i++) arr[i] = values[from + i];
    return t;
  }

  // ---- reads ----

  get(key: LuaValue): LuaValue {
    switch (typeof key) {
      case "string":
        return this.getStr(key);
      case "number":
        return this.getNum(key);
      case "undefined":
        return undefined;
      default:
        return this.getOther(key);
    }
  }

  /** t[i] for i a number with an integer value. */
  getInt(i: number): LuaValue {
    const j = i - 1;
    if (j >= 0 && j < this.arraySize) return this.arr[j];
    return this.getNumHash(i);
  }

  getStr(s: string): LuaValue {
    return this.getStrHashed(s, keyHash(s));
  }

  /** t[s] where `hash` is stringHash(s) (generated code computes it once for a constant name). */
  getStrHashed(s: string, hash: number): LuaValue {
    const node = this.node;
    let o = (hash & this.mask) * nodeFields;
    do {
      if (node[o] === s) return node[o + valueField];
      o = node[o + nextField] as number;
    } while (o !== noNode);
    return undefined;
  }

  private getNum(n: number): LuaValue {
    const j = n - 1;
    if (j >= 0 && j < this.arraySize && (j | 0) === j) return this.arr[j];
    return this.getNumHash(n);
  }

  private getNumHash(n: number): LuaValue {
    const node = this.node;
    let o = this.numberPosition(n);
    do {
      if (node[o] === n) return node[o + valueField];
      o = node[o + nextField] as number;
    } while (o !== noNode);
    return undefined;
  }

  private getOther(key: LuaValue): LuaValue {
    const node = this.node;
    let o = this.mainPosition(key);
    do {
      if (node[o] === key) return node[o + valueField];
      o = node[o + nextField] as number;
    } while (o !== noNode);
    return undefined;
  }

  // ---- writes (luaH_set: an absent key gets a node even when the value is nil) ----

  set(key: LuaValue, value: LuaValue): void {
    switch (typeof key) {
      case "string":
        return this.setStr(key, value);
      case "number":
        return this.setNum(key, value);
      case "undefined":
        return bail("table index is nil");
      default:
        return this.setOther(key, value);
    }
  }

  /** t[i] = v for i a number with an integer value. */
  setInt(i: number, value: LuaValue): void {
    const j = i - 1;
    if (j >= 0 && j < this.arraySize) {
      this.arr[j] = value;
      return;
    }
    this.setNumHash(i, value);
  }

  setStr(s: string, value: LuaValue): void {
    this.setStrHashed(s, keyHash(s), value);
  }

  /** t[s] = value where `hash` is stringHash(s). */
  setStrHashed(s: string, hash: number, value: LuaValue): void {
    const node = this.node;
    const main = (hash & this.mask) * nodeFields;
    let o = main;
    do {
      if (node[o] === s) {
        if (node[o + valueField] === undefined && o !== main) bailDeadKey();
        node[o + valueField] = value;
        return;
      }
      o = node[o + nextField] as number;
    } while (o !== noNode);
    this.newKey(s, main, value);
  }

  private setNum(n: number, value: LuaValue): void {
    const j = n - 1;
    if (j >= 0 && j < this.arraySize && (j | 0) === j) {
      this.arr[j] = value;
      return;
    }
    if (Number.isNaN(n)) bail("table index is NaN");
    this.setNumHash(n, value);
  }

  private setNumHash(n: number, value: LuaValue): void {
    const node = this.node;
    const main = this.numberPosition(n);
    let o = main;
    do {
      if (node[o] === n) {
        node[o + valueField] = value;
        return;
      }
      o = node[o + nextField] as number;
    } while (o !== noNode);
    this.newKey(n, main, value);
  }

  private setOther(key: LuaValue, value: LuaValue): void {
    const node = this.node;
    const main = this.mainPosition(key);
    let o = main;
    do {
      if (node[o] === key) {
        // Booleans are never marked dead; tables and functions are.
        if (node[o + valueField] === undefined && o !== main && typeof key !== "boolean") bailDeadKey();
        node[o + valueField] = value;
        return;
      }
      o = node[o + nextField] as number;
    } while (o !== noNode);
    this.newKey(key, main, value);
  }

  /**
   * newkey: puts a key not in the table at its main position `main`, moving a colliding key that
   * is not in its own main position to a free node, or else putting the new key in a free node
   * chained after `main`; with no free node left, rehashes and sets again.
   */
  private newKey(key: LuaValue, main: number, value: LuaValue): void {
    const node = this.node;
    let at = main;
    if (node[main + valueField] !== undefined || node === dummyNodes) {
      const free = this.freeNode();
      if (free === noNode) {
        this.rehash(key);
        this.set(key, value);
        return;
      }
      let other = this.mainPosition(node[main]);
      if (other !== main) {
        // The colliding key is out of its main position: relink its chain through `free`.
        this.shape++;
        while (node[other + nextField] !== main) other = node[other + nextField] as number;
        node[other + nextField] = free;
        node[free] = node[main];
        node[free + valueField] = node[main + valueField];
        node[free + nextField] = node[main + nextField];
        node[main + nextField] = noNode;
        node[main + valueField] = undefined;
      } else {
        node[free + nextField] = node[main + nextField];
        node[main + nextField] = free;
        at = free;
      }
    } else if (node[main] !== undefined) {
      // A dead key's node is taken over: a traversal standing on that key loses its place.
      this.shape++;
    }
    node[at] = key;
    node[at + valueField] = value;
  }

  /** getfreepos: the next node down from lastFree whose key was never set, or noNode. */
  private freeNode(): number {
    const node = this.node;
    while (this.lastFree > 0) {
      this.lastFree -= nodeFields;
      if (node[this.lastFree] === undefined) return this.lastFree;
    }
    return noNode;
  }

  // ---- main positions ----

  private mainPosition(key: LuaValue): number {
    switch (typeof key) {
      case "string":
        return (keyHash(key) & this.mask) * nodeFields;
      case "number":
        return this.numberPosition(key);
      case "boolean":
        return (key ? 1 & this.mask : 0) * nodeFields;
      case "function":
        return ((functionIdentity(key) % (this.mask | 1)) >>> 0) * nodeFields;
      case "object":
        return ((key instanceof LuaTable ? key.identity : objectIdentity(key)) % (this.mask | 1)) * nodeFields;
      default:
        return 0;
    }
  }

  /** hashnum: node 0 for ±0, else the halves' sum modulo (size-1)|1. */
  private numberPosition(n: number): number {
    if (n === 0) return 0;
    return (numberHash(n) % (this.mask | 1)) * nodeFields;
  }

  // ---- rehash ----

  /** Sizes both parts for the keys present plus `extraKey`, then reinserts them (rehash). */
  private rehash(extraKey: LuaValue): void {
    const nums = sliceCounts;
    nums.fill(0);
    let arrayKeys = this.countArrayKeys(nums);
    let total = arrayKeys;
    const node = this.node;
    for (let o = node.length - nodeFields; o >= 0; o -= nodeFields) {
      if (node[o + valueField] === undefined) continue;
      arrayKeys += countIntegerKey(node[o], nums);
      total++;
    }
    arrayKeys += countIntegerKey(extraKey, nums);
    total++;
    const arraySize = chooseArraySize(nums, arrayKeys);
    this.resize(arraySize, total - arrayKeysBelow);
  }

  /** numusearray: counts the array part's non-nil slots into nums by slice; returns their total. */
  private countArrayKeys(nums: Int32Array): number {
    const arr = this.arr;
    let total = 0;
    let i = 1;
    for (let lg = 0, ttlg = 1; lg <= sizeBitsMax; lg++, ttlg *= 2) {
      let count = 0;
      let lim = ttlg;
      if (lim > this.arraySize) {
        lim = this.arraySize;
        if (i > lim) break;
      }
      for (; i <= lim; i++) if (arr[i - 1] !== undefined) count++;
      nums[lg]! += count;
      total += count;
    }
    return total;
  }

  /** resize: the array part to arraySize slots, the hash part to fit hashCount keys; reinserts. */
  private resize(arraySize: number, hashCount: number): void {
    this.shape++;
    const oldArraySize = this.arraySize;
    const oldNode = this.node;
    if (arraySize > oldArraySize) this.growArray(arraySize);
    this.setNodeVector(hashCount);
    if (arraySize < oldArraySize) {
      this.arraySize = arraySize;
      const arr = this.arr;
      for (let i = arraySize; i < oldArraySize; i++) {
        const v = arr[i];
        if (v !== undefined) this.setNumHash(i + 1, v);
      }
      arr.length = arraySize;
    }
    for (let o = oldNode.length - nodeFields; o >= 0; o -= nodeFields) {
      const v = oldNode[o + valueField];
      if (v !== undefined) this.set(oldNode[o], v);
    }
  }

  /** setarrayvector, growing: nil slots up to `size`. */
  private growArray(size: number): void {
    const arr = this.arr;
    arr.length = this.arraySize;
    for (let i = this.arraySize; i < size; i++) arr.push(undefined);
    this.arraySize = size;
  }

  /** setnodevector: a fresh hash part of the power of two >= size nodes (0: the dummy part). */
  private setNodeVector(size: number): void {
    if (size === 0) {
      this.node = dummyNodes;
      this.mask = 0;
      this.lastFree = 0;
      return;
    }
    const bits = ceilLog2(size);
    if (bits > sizeBitsMax) bail("table overflow");
    const count = 1 << bits;
    this.node = bits < freshNodes.length ? freshNodes[bits]!.slice() : freshNodeVector(count);
    this.mask = count - 1;
    this.lastFree = count * nodeFields;
  }

  // ---- length ----

  /** `#t`: luaH_getn, a border found by binary search in the array part or else in the hash part. */
  length(): number {
    let j = this.arraySize;
    const arr = this.arr;
    if (j > 0 && arr[j - 1] === undefined) {
      let i = 0;
      while (j - i > 1) {
        const m = (i + j) >>> 1;
        if (arr[m - 1] === undefined) j = m;
        else i = m;
      }
      return i;
    }
    if (this.node === dummyNodes) return j;
    return this.unboundSearch(j);
  }

  /** unbound_search: doubles past the array part until a nil, then bisects. */
  private unboundSearch(start: number): number {
    let i = start;
    let j = start + 1;
    while (this.getInt(j) !== undefined) {
      i = j;
      j *= 2;
      if (j > 0x7fffffff) {
        // As Lua: a table built to defeat the doubling gets a linear search.
        i = 1;
        while (this.getInt(i) !== undefined) i++;
        return i - 1;
      }
    }
    while (j - i > 1) {
      const m = Math.floor((i + j) / 2);
      if (this.getInt(m) === undefined) j = m;
      else i = m;
    }
    return i;
  }

  // ---- table library ----

  /** table.insert(t, v): t[#t+1] = v. */
  insert(value: LuaValue): void {
    this.setInt(this.length() + 1, value);
  }

  /** table.remove(t): removes and returns t[#t]; undefined (no result at all) when #t is 0. */
  remove(): LuaValue {
    const e = this.length();
    if (e < 1) return undefined;
    const v = this.getInt(e);
    this.setInt(e, undefined);
    return v;
  }

  /**
   * OP_SETLIST: t[first + k] = values[from + k] for k < count, the array part first grown to hold
   * them all (luaH_resizearray, which rebuilds the hash part too). A constructor's generated code
   * stores each batch of `constructorFlushItems` positional items this way, its last batch with
   * the multiple results of a trailing call or `...`.
   */
  setList(first: number, values: LuaValue[], from: number, count: number): void {
    const last = first + count - 1;
    if (last > this.arraySize) this.resizeArray(last);
    const arr = this.arr;
    for (let k = 0; k < count; k++) arr[first - 1 + k] = values[from + k];
  }

  /** luaH_resizearray: the array part to `size` slots, the hash part rebuilt at its size (reordered). */
  resizeArray(size: number): void {
    this.resize(size, this.node === dummyNodes ? 0 : this.mask + 1);
  }

  // ---- traversal ----

  /** next(t, key): [key, value] of the entry after `key` (nil: the first), or undefined at the end. */
  next(key: LuaValue): LuaValue[] | undefined {
    const slot = this.nextSlot(this.slotOf(key));
    if (slot < 0) return undefined;
    return [this.slotKey(slot), this.slotValue(slot)];
  }

  /**
   * findindex: the traversal slot of `key` (array slots first, then nodes), -1 for nil; bails when
   * the key is not in the table. A key set to nil keeps its node, so it is still found.
   */
  slotOf(key: LuaValue): number {
    if (key === undefined) return -1;
    const i = arrayIndex(key);
    if (i > 0 && i <= this.arraySize) return i - 1;
    const node = this.node;
    let o = this.mainPosition(key);
    do {
      if (node[o] === key) return this.arraySize + o / nodeFields;
      o = node[o + nextField] as number;
    } while (o !== noNode);
    return bail("invalid key to 'next'");
  }

  /** The first slot after `slot` holding a non-nil value, or -1. */
  nextSlot(slot: number): number {
    const arr = this.arr;
    const arraySize = this.arraySize;
    let i = slot + 1;
    for (; i < arraySize; i++) if (arr[i] !== undefined) return i;
    const node = this.node;
    for (let o = (i - arraySize) * nodeFields; o < node.length; o += nodeFields) {
      if (node[o + valueField] !== undefined) return arraySize + o / nodeFields;
    }
    return -1;
  }

  slotKey(slot: number): LuaValue {
    return slot < this.arraySize ? slot + 1 : this.node[(slot - this.arraySize) * nodeFields];
  }

  slotValue(slot: number): LuaValue {
    return slot < this.arraySize ? this.arr[slot] : this.node[(slot - this.arraySize) * nodeFields + valueField];
  }
}

/** computesizes' second result: how many integer keys the chosen array part holds. */
let arrayKeysBelow = 0;

/**
 * computesizes: the largest power of two n such that more than n/2 of the `integerKeys` integer
 * keys fall in 1..n (0 if none); sets arrayKeysBelow to how many do.
 */
function chooseArraySize(nums: Int32Array, integerKeys: number): number {
  let a = 0;
  let na = 0;
  let n = 0;
  for (let i = 0, twoToI = 1; twoToI >>> 1 < integerKeys; i++, twoToI *= 2) {
    if (nums[i]! > 0) {
      a += nums[i]!;
      if (a > twoToI >>> 1) {
        n = twoToI;
        na = a;
      }
    }
    if (a === integerKeys) break;
  }
  arrayKeysBelow = na;
  return n;
}

/** countint: counts an integer key in 1..2^26 in its slice; 1 if counted, else 0. */
function countIntegerKey(key: LuaValue, nums: Int32Array): number {
  const k = arrayIndex(key);
  if (k > 0 && k <= arraySizeMax) {
    nums[ceilLog2(k)]!++;
    return 1;
  }
  return 0;
}

/**
 * The identity of a key that is a function, a library table or cjson.null. cjson.null carries
 * its own, 0: it is Lua's NULL light userdata, whose "address" hashes to node 0.
 */
function objectIdentity(f: object): number {
  const own = (f as { identity?: unknown }).identity;
  return typeof own === "number" ? own : functionIdentity(f as LuaFunction);
}

function functionIdentity(f: LuaFunction): number {
  let id = functionIdentities.get(f);
  if (id === undefined) {
    id = ++identityLast >>> 0;
    functionIdentities.set(f, id);
  }
  return id;
}

function bailDeadKey(): never {
  return bail("a key set to nil is set again off its main position (Lua's order depends on its collector then)");
}
