/**
 * The 52-bit geohash Redis keeps as a GEO member's score: longitude and latitude are each cut
 * into 2^26 equal steps over their range, and the two cell numbers are interleaved bit by bit
 * (latitude in the even bits, longitude in the odd bits), so nearby points get nearby scores
 * and a cell at any coarser step is one contiguous score range.
 *
 * The latitude range is Web Mercator's (±85.05112878), not ±90: that is what Redis encodes, and
 * the limit every GEO command checks its coordinates against. GEOHASH re-encodes on ±90 to print
 * a standard geohash string.
 *
 * Hashes at the precisions the search uses are up to 54 bits (a cell number can equal 2^step
 * when a coordinate sits exactly on the upper limit), beyond a double's exact integers for bit
 * operations, so cell arithmetic is done on BigInt; only the per-member decode, the hot path of
 * a search, works on two 32-bit halves.
 */

export const longitudeMin = -180;
export const longitudeMax = 180;
export const latitudeMin = -85.05112878;
export const latitudeMax = 85.05112878;
/** Bits per coordinate in a stored score: 26 + 26 = 52, a double's exact integer range. */
export const stepMax = 26;

export interface CoordRange {
  readonly min: number;
  readonly max: number;
}

export const longitudeRange: CoordRange = { min: longitudeMin, max: longitudeMax };
export const mercatorLatitudeRange: CoordRange = { min: latitudeMin, max: latitudeMax };
/** The standard geohash latitude range, for GEOHASH's strings. */
export const fullLatitudeRange: CoordRange = { min: -90, max: 90 };

/** A cell: `step` bits per coordinate, interleaved into `bits`. */
export interface Cell {
  readonly bits: bigint;
  readonly step: number;
}

/** A cell's extent in degrees. */
export interface Area {
  readonly longitudeMin: number;
  readonly longitudeMax: number;
  readonly latitudeMin: number;
  readonly latitudeMax: number;
}

/** Whether Redis accepts the pair as a position (GEOADD, FROMLONLAT, GEORADIUS). */
export function isValidPosition(longitude: number, latitude: number): boolean {
  return longitude >= longitudeMin && longitude <= longitudeMax && latitude >= latitudeMin && latitude <= latitudeMax;
}

// ---- bit interleaving ---------------------------------------------------------------------------

/** Spreads the low 16 bits of n to the even bit positions of a 32-bit word. */
function spreadEven(n: number): number {
  n &= 0xffff;
  n = (n | (n << 8)) & 0x00ff00ff;
  n = (n | (n << 4)) & 0x0f0f0f0f;
  n = (n | (n << 2)) & 0x33333333;
  n = (n | (n << 1)) & 0x55555555;
  return n;
}

/** Gathers the even bits of a 32-bit word into 16 bits (the inverse of spreadEven). */
function gatherEven(n: number): number {
  n &= 0x55555555;
  n = (n | (n >>> 1)) & 0x33333333;
  n = (n | (n >>> 2)) & 0x0f0f0f0f;
  n = (n | (n >>> 4)) & 0x00ff00ff;
  n = (n | (n >>> 8)) & 0x0000ffff;
  return n;
}

/** Interleaves two 32-bit cell numbers into 64 bits: latitude even, longitude odd. */
export function interleave(latitudeCell: number, longitudeCell: number): bigint {
  const low = (spreadEven(latitudeCell) | (spreadEven(longitudeCell) << 1)) >>> 0;
  const high = (spreadEven(latitudeCell >>> 16) | (spreadEven(longitudeCell >>> 16) << 1)) >>> 0;
  return (BigInt(high) << 32n) | BigInt(low);
}

/** The two 32-bit cell numbers of a 64-bit hash given as its high and low words. */
function deinterleaveWords(high: number, low: number): { latitudeCell: number; longitudeCell: number } {
  return {
    latitudeCell: (gatherEven(low) | (gatherEven(high) << 16)) >>> 0,
    longitudeCell: (gatherEven(low >>> 1) | (gatherEven(high >>> 1) << 16)) >>> 0,
  };
}

const word = 2 ** 32;

export function deinterleave(bits: bigint): { latitudeCell: number; longitudeCell: number } {
  return deinterleaveWords(Number((bits >> 32n) & 0xffffffffn), Number(bits & 0xffffffffn));
}

// ---- encoding and decoding ----------------------------------------------------------------------

/**
 * The cell of `step` bits per coordinate holding the position, on the given latitude range. The
 * caller has checked the position (isValidPosition). A coordinate on its upper limit gets cell
 * number 2^step, one past the last, which spills into the next bit as in Redis.
 */
export function encode(longitude: number, latitude: number, step: number, latitudeRange: CoordRange = mercatorLatitudeRange): Cell {
  const scale = 2 ** step;
  const latitudeOffset = ((latitude - latitudeRange.min) / (latitudeRange.max - latitudeRange.min)) * scale;
  const longitudeOffset = ((longitude - longitudeRange.min) / (longitudeRange.max - longitudeRange.min)) * scale;
  return { bits: interleave(Math.trunc(latitudeOffset), Math.trunc(longitudeOffset)), step };
}

/** A cell's bits shifted to the 52-bit score scale: the lowest score inside the cell. */
export const alignTo52 = (cell: Cell): bigint => cell.bits << BigInt(2 * (stepMax - cell.step));

/** The score GEOADD stores for a valid position: the 52-bit hash as a double. */
export const scoreOf = (longitude: number, latitude: number): number => Number(encode(longitude, latitude, stepMax).bits);

/**
 * One coordinate's extent from its cell number. The cell number is a C uint32 in Redis, so
 * "number + 1" wraps at 2^32 (reachable only from a score a client wrote with ZADD).
 */
function cellExtent(cellNumber: number, step: number, range: CoordRange): [number, number] {
  const cells = 2 ** step;
  const scale = range.max - range.min;
  return [range.min + (cellNumber / cells) * scale, range.min + (((cellNumber + 1) >>> 0) / cells) * scale];
}

export function decodeArea(cell: Cell): Area {
  const { latitudeCell, longitudeCell } = deinterleave(cell.bits);
  const [latitudeLow, latitudeHigh] = cellExtent(latitudeCell, cell.step, mercatorLatitudeRange);
  const [longitudeLow, longitudeHigh] = cellExtent(longitudeCell, cell.step, longitudeRange);
  return { longitudeMin: longitudeLow, longitudeMax: longitudeHigh, latitudeMin: latitudeLow, latitudeMax: latitudeHigh };
}

const int63 = 2 ** 63;
const int64 = 2 ** 64;

/**
 * A score as the uint64 Redis converts it to (a C cast on x86-64): truncated toward zero,
 * negative values wrapped modulo 2^64, and the conversion's out-of-range answers for the rest
 * (0 from 2^64 up, 2^63 at or below -2^63). Returned as high and low 32-bit words.
 */
function scoreWords(score: number): [high: number, low: number] {
  if (score >= 0 && score < int64) {
    const whole = Math.trunc(score);
    const high = Math.floor(whole / word);
    return [high, whole - high * word];
  }
  if (score >= int64) return [0, 0];
  if (score > -int63) {
    const wrapped = BigInt.asUintN(64, BigInt(Math.trunc(score)));
    return [Number(wrapped >> 32n), Number(wrapped & 0xffffffffn)];
  }
  return [0x80000000, 0];
}

/** A score as WITHHASH prints it: C's conversion to long long (truncated; its out-of-range answer, -2^63, beyond). */
export function scoreAsInteger(score: number): bigint {
  if (score >= -int63 && score < int63) return BigInt(Math.trunc(score));
  return -(2n ** 63n);
}

const clamp = (value: number, range: CoordRange) => (value > range.max ? range.max : value < range.min ? range.min : value);

/**
 * The position a score stands for: the centre of its 26-bit cell, held inside the valid range
 * (a cell numbered 2^26, from a coordinate on the upper limit, has its centre past it).
 */
export function decodeScore(score: number): [longitude: number, latitude: number] {
  const [high, low] = scoreWords(score);
  const { latitudeCell, longitudeCell } = deinterleaveWords(high, low);
  const [latitudeLow, latitudeHigh] = cellExtent(latitudeCell, stepMax, mercatorLatitudeRange);
  const [longitudeLow, longitudeHigh] = cellExtent(longitudeCell, stepMax, longitudeRange);
  return [clamp((longitudeLow + longitudeHigh) / 2, longitudeRange), clamp((latitudeLow + latitudeHigh) / 2, mercatorLatitudeRange)];
}

// ---- neighbours ---------------------------------------------------------------------------------

const uint64 = (n: bigint) => BigInt.asUintN(64, n);
const evenBits = 0x5555555555555555n;
const oddBits = 0xaaaaaaaaaaaaaaaan;

/**
 * Moves a cell one step along one coordinate (`ownBits` selects it: odd bits for longitude, even
 * for latitude), wrapping around at the ends as the interleaved arithmetic does in Redis.
 */
function move(cell: Cell, direction: -1 | 0 | 1, ownBits: bigint): Cell {
  if (direction === 0) return cell;
  const otherBits = ownBits === oddBits ? evenBits : oddBits;
  const shift = BigInt(64 - cell.step * 2);
  let own = cell.bits & ownBits;
  const other = cell.bits & otherBits;
  // Setting every bit of the other coordinate makes carries and borrows ripple across them.
  const filler = otherBits >> shift;
  own = direction > 0 ? uint64(own + filler + 1n) : uint64((own | filler) - (filler + 1n));
  own &= ownBits >> shift;
  return { bits: own | other, step: cell.step };
}

/** The cell `east` steps east (negative: west) and `north` steps north of `cell`, each -1..1. */
export const neighbour = (cell: Cell, east: -1 | 0 | 1, north: -1 | 0 | 1): Cell => move(move(cell, east, oddBits), north, evenBits);

// ---- geohash strings ----------------------------------------------------------------------------

const base32 = "0123456789bcdefghjkmnpqrstuvwxyz";
const geohashChars = 11;
const charBits = 5n;

/**
 * The standard 11-character geohash of a position, as GEOHASH prints it: re-encoded on the ±90
 * latitude range. 52 bits fill ten characters; the eleventh is always "0".
 */
export function geohashString(longitude: number, latitude: number): string {
  const bits = encode(longitude, latitude, stepMax, fullLatitudeRange).bits;
  let text = "";
  for (let i = 0; i < geohashChars - 1; i++) {
    const shift = BigInt(2 * stepMax) - BigInt(i + 1) * charBits;
    text += base32[Number((bits >> shift) & 0x1fn)];
  }
  return `${text}0`;
}
