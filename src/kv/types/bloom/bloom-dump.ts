/**
 * A Bloom filter chain as RedisBloom 2.8 dumps it: BF.SCANDUMP hands it out in chunks,
 * BF.LOADCHUNK takes them back, and an append-only file rewrite writes it as those LOADCHUNKs.
 *
 * The first chunk is a header, packed and little-endian (RedisBloom copies its C structs as
 * they are laid out on x86-64):
 *
 *   chain        items u64 · sub-filters u32 · options u32 · expansion u32            20 bytes
 *   sub-filter   bytes u64 · bits u64 · items u64 · error rate f64 · bits per item f64 ·
 *                hashes u32 · capacity u64 · n2 u8                                     53 bytes each
 *
 * Then come the bit arrays, all sub-filters' one after another, at most 16 MiB per chunk and
 * never a chunk across two sub-filters. Every chunk travels with an iterator, 1 + the byte
 * offset where the chunk ends in that concatenation; so the header's is 1, LOADCHUNK finds where
 * a chunk goes as iterator - length, and SCANDUMP's reply to an iterator is the next one to ask
 * for — 0 once nothing is left.
 *
 * The layout is RedisBloom's (its sb.c, and the dump its BF.SCANDUMP documentation shows, which
 * our test reproduces byte for byte); so are the checks on a header, with these choices of ours
 * where RedisBloom would accept what we cannot represent exactly: only its "no rounding" and
 * 64-bit-hash options (every filter RedisBloom 2.8's commands create has them; older 32-bit-hash
 * or power-of-two filters would answer differently here), n2 = 0, sub-filters within
 * filterBytesMax, bits per item within what an error rate can give, and item counts below 2^53.
 * Anything else is "ERR received bad data".
 */
import { BloomChain } from "./chain.ts";
import { badData, chunkTooBig, couldNotCreate, noLinkFound } from "./bloom-errors.ts";
import { BloomFilter, bitsPerItemMax, type FilterSizing, filterBytesMax, hashesFor } from "./filter.ts";

/** RedisBloom's option bits (its BLOOM_OPT_* flags) that we know. */
const optionNoRound = 1;
const optionForce64 = 4;
const optionNoScaling = 8;
/** The options of every chain we (and RedisBloom 2.8's commands) create, NONSCALING aside. */
const optionsAlways = optionNoRound | optionForce64;

const chainHeaderBytes = 20;
const linkHeaderBytes = 53;
/** RedisBloom's MAX_SCANDUMP_SIZE: the largest chunk BF.SCANDUMP answers. */
export const dumpChunkBytesMax = 16 * 1024 * 1024;
/** The iterator that comes with the header, and the first one to ask BF.SCANDUMP for bits. */
export const headerIterator = 1n;
/** Item counts are JavaScript numbers: a dump may not claim more than they hold exactly. */
const itemsMax = BigInt(Number.MAX_SAFE_INTEGER);

/** The header of `chain`: what BF.SCANDUMP key 0 answers. */
export function encodeHeader(chain: BloomChain): Buffer {
  const filters = chain.filters;
  const out = Buffer.alloc(chainHeaderBytes + linkHeaderBytes * filters.length);
  out.writeBigUInt64LE(BigInt(chain.size), 0);
  out.writeUInt32LE(filters.length, 8);
  out.writeUInt32LE(optionsAlways | (chain.scaling ? 0 : optionNoScaling), 12);
  out.writeUInt32LE(chain.expansion, 16);
  filters.forEach((filter, i) => encodeLink(out, chainHeaderBytes + linkHeaderBytes * i, filter));
  return out;
}

function encodeLink(out: Buffer, at: number, filter: BloomFilter): void {
  const s = filter.sizing;
  out.writeBigUInt64LE(BigInt(s.bytes), at);
  out.writeBigUInt64LE(BigInt(s.bitCount), at + 8);
  out.writeBigUInt64LE(BigInt(filter.size), at + 16);
  out.writeDoubleLE(s.errorRate, at + 24);
  out.writeDoubleLE(s.bitsPerItem, at + 32);
  out.writeUInt32LE(s.hashes, at + 40);
  out.writeBigUInt64LE(s.capacity, at + 44);
  // n2, the power of two a rounded filter has, stays 0: our filters are never rounded.
}

/**
 * The empty chain a header describes, every check made before anything is allocated so that a
 * refused header changes nothing. Throws "ERR received bad data" for a header we cannot load.
 */
export function decodeHeader(data: Buffer): BloomChain {
  if (data.length < chainHeaderBytes) throw badData();
  const count = data.readUInt32LE(8);
  if (count === 0 || data.length !== chainHeaderBytes + linkHeaderBytes * count) throw badData();
  const options = data.readUInt32LE(12);
  if ((options & ~optionNoScaling) !== optionsAlways) throw badData();
  const links: { sizing: FilterSizing; size: bigint }[] = [];
  let items = 0n;
  for (let i = 0; i < count; i++) {
    const link = decodeLink(data, chainHeaderBytes + linkHeaderBytes * i);
    if (link === null) throw badData();
    links.push(link);
    items += link.size;
  }
  // RedisBloom refuses a chain whose count is not the sum of its sub-filters' counts too.
  const size = data.readBigUInt64LE(0);
  if (items !== size || size > itemsMax) throw badData();
  return BloomChain.restore(allocate(links), data.readUInt32LE(16), (options & optionNoScaling) === 0, Number(size));
}

/** One sub-filter's description, or null when it is inconsistent or beyond what we hold. */
function decodeLink(data: Buffer, at: number): { sizing: FilterSizing; size: bigint } | null {
  const bytes = data.readBigUInt64LE(at);
  const bits = data.readBigUInt64LE(at + 8);
  const errorRate = data.readDoubleLE(at + 24);
  const bitsPerItem = data.readDoubleLE(at + 32);
  const hashes = data.readUInt32LE(at + 40);
  const n2 = data[at + 52];
  // Written so that NaN fails every comparison.
  if (!(errorRate > 0 && errorRate < 1) || !(bitsPerItem > 0 && bitsPerItem <= bitsPerItemMax)) return null;
  if (hashes !== hashesFor(bitsPerItem) || n2 !== 0) return null;
  if (bytes === 0n || bytes > BigInt(filterBytesMax) || bits !== bytes * 8n) return null;
  const sizing = { capacity: data.readBigUInt64LE(at + 44), errorRate, bitsPerItem, bytes: Number(bytes), bitCount: Number(bits), hashes };
  return { sizing, size: data.readBigUInt64LE(at + 16) };
}

/** Zeroed bit arrays for the links; a failed allocation is an error reply, not a crash. */
function allocate(links: readonly { sizing: FilterSizing; size: bigint }[]): BloomFilter[] {
  try {
    return links.map((link) => {
      const filter = new BloomFilter(link.sizing);
      filter.size = Number(link.size);
      return filter;
    });
  } catch (error) {
    if (error instanceof RangeError) throw couldNotCreate();
    throw error;
  }
}

/** The sub-filter and the offset in its bits that `iterator` (1 + a byte offset) points at. */
function locate(chain: BloomChain, iterator: bigint): { filter: BloomFilter; offset: number } | null {
  if (iterator < 1n) return null;
  let offset = iterator - 1n;
  for (const filter of chain.filters) {
    const bytes = BigInt(filter.bits.length);
    if (offset < bytes) return { filter, offset: Number(offset) };
    offset -= bytes;
  }
  return null;
}

export interface Chunk {
  /** The iterator to ask for next (and to load this chunk with); 0 when the dump is over. */
  next: bigint;
  /** A view of the chain's bits: copy it before the chain changes. */
  data: Uint8Array;
}

/**
 * BF.SCANDUMP's answer to an iterator other than 0: the bits from there, or the end. An append-only
 * file rewrite asks for smaller chunks (`maxBytes`); LOADCHUNK takes any size.
 */
export function chunkAt(chain: BloomChain, iterator: bigint, maxBytes = dumpChunkBytesMax): Chunk {
  const at = locate(chain, iterator);
  if (at === null) return { next: 0n, data: new Uint8Array(0) };
  const length = Math.min(maxBytes, at.filter.bits.length - at.offset);
  return { next: iterator + BigInt(length), data: at.filter.bits.subarray(at.offset, at.offset + length) };
}

/** BF.LOADCHUNK onto an existing chain: copies `data` to where `iterator` says it ends. */
export function loadChunk(chain: BloomChain, iterator: bigint, data: Uint8Array): void {
  const length = BigInt(data.length);
  if (iterator <= 0n || iterator < length) throw badData();
  const at = locate(chain, iterator - length);
  if (at === null) throw noLinkFound();
  if (data.length > at.filter.bits.length - at.offset) throw chunkTooBig();
  at.filter.bits.set(data, at.offset);
}

/** Zeros to compare chunks with (one memcmp each), made the first time a rewrite needs them. */
let zeros: Uint8Array | undefined;

/** Whether a chunk (at most dumpChunkBytesMax) is all zeros: a rewrite leaves such chunks out. */
export function isAllZero(bytes: Uint8Array): boolean {
  zeros ??= new Uint8Array(dumpChunkBytesMax);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).equals(zeros.subarray(0, bytes.length));
}
