/**
 * Payload compression of the binary protocol, chosen in the handshake by feature bit: gzip (0x1,
 * the spec's) and lz4 (0x2, ours). With one negotiated, every frame's payload is compressed both
 * ways; the frame header is not. A connection uses one codec: a client asking for both gets lz4,
 * which compressed a produce of JSON-like records 6× faster than gzip and read it back 4× faster
 * (bench: 67 KB, 98 µs against 590 to compress, 19 against 79 to inflate).
 *
 * lz4's payload is what lz4_flex's `compress_prepend_size`, python-lz4's `lz4.block.compress` and
 * lz4-java's `LZ4CompressorWithLength` write: the inflated size as a little-endian u32, then one LZ4
 * block. The size comes first, so a payload claiming more than the bound is refused before
 * anything is inflated; gzip is inflated with its output capped at the bound instead.
 */
import { compressSync as lz4Compress, uncompressSync as lz4Uncompress } from "lz4-napi";
import { gunzipSync, gzipSync } from "node:zlib";
import { SvcError } from "../../core/errors.ts";
import { features } from "./wire.ts";

export type Codec = "gzip" | "lz4";

/** Bytes of lz4's size prefix. */
const lz4SizeBytes = 4;

/** The feature bits the broker accepts of `requested`: at most one codec, lz4 when both are asked. */
export function acceptedFeatures(requested: number): number {
  if ((requested & features.lz4) !== 0) return features.lz4;
  return requested & features.gzip;
}

/** The codec the accepted feature bits name; null for none. */
export function codecOf(accepted: number): Codec | null {
  if ((accepted & features.lz4) !== 0) return "lz4";
  if ((accepted & features.gzip) !== 0) return "gzip";
  return null;
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export function compress(codec: Codec, bytes: Uint8Array): Uint8Array {
  return codec === "gzip" ? gzipSync(bytes) : lz4Compress(asBuffer(bytes));
}

const tooLarge = (bytesMax: number) => new SvcError("body_too_large", `the payload inflates past ${bytesMax} bytes (--max-request-body-bytes)`);

/**
 * `bytes` inflated, never past `bytesMax`: a 413 for a payload that would pass it (a bomb is
 * refused without being inflated whole), a 400 for one that is not valid in `codec`.
 */
export function inflate(codec: Codec, bytes: Uint8Array, bytesMax: number): Uint8Array {
  return codec === "gzip" ? gunzip(bytes, bytesMax) : lz4Inflate(bytes, bytesMax);
}

function gunzip(bytes: Uint8Array, bytesMax: number): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: bytesMax });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw tooLarge(bytesMax);
    throw new SvcError("bad_request", `the payload is not valid gzip: ${(error as Error).message}`);
  }
}

function lz4Inflate(bytes: Uint8Array, bytesMax: number): Uint8Array {
  if (bytes.length < lz4SizeBytes) throw new SvcError("bad_request", `the payload is not valid lz4: ${bytes.length} bytes, too short for its size`);
  const size = new DataView(bytes.buffer, bytes.byteOffset, lz4SizeBytes).getUint32(0, true);
  if (size > bytesMax) throw tooLarge(bytesMax);
  let inflated: Uint8Array;
  try {
    inflated = lz4Uncompress(asBuffer(bytes));
  } catch (error) {
    throw new SvcError("bad_request", `the payload is not valid lz4: ${(error as Error).message}`);
  }
  if (inflated.length !== size)
    throw new SvcError("bad_request", `the payload is not valid lz4: it inflates to ${inflated.length} bytes, not the ${size} it says`);
  return inflated;
}
