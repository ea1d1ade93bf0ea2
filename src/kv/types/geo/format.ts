/**
 * Numbers as Redis's geo commands print them. Redis formats with C's printf, which rounds the
 * exact binary value of a double to the requested decimal places (ties to even). JavaScript's
 * toFixed rounds ties up and stops at 100 digits, so we do the exact decimal arithmetic ourselves
 * with BigInt: a double is m·2^e, and m·2^e·10^d is an exact rational we can round.
 */

const float = new Float64Array(1);
const floatBits = new BigUint64Array(float.buffer);

const mantissaBits = 52n;
const mantissaMask = (1n << mantissaBits) - 1n;
const exponentMask = 0x7ffn;
/** IEEE 754 binary64: exponent bias plus the 52 fraction bits, so value = mantissa · 2^(exponent - 1075). */
const exponentOffset = 1075;

/** |value| as mantissa · 2^exponent with an integer mantissa (value finite). */
function decompose(value: number): { mantissa: bigint; exponent: number } {
  float[0] = value;
  const bits = floatBits[0]!;
  const biased = Number((bits >> mantissaBits) & exponentMask);
  const fraction = bits & mantissaMask;
  // Subnormals have no implicit leading 1 and the smallest exponent.
  if (biased === 0) return { mantissa: fraction, exponent: 1 - exponentOffset };
  return { mantissa: fraction | (1n << mantissaBits), exponent: biased - exponentOffset };
}

/**
 * C's `%.<digits>f` of a finite double: the exact value rounded half to even. The sign of a
 * negative number survives rounding to zero ("-0.000000"), as in glibc.
 */
function fixedFinite(value: number, digits: number): string {
  const negative = value < 0 || Object.is(value, -0);
  const { mantissa, exponent } = decompose(value);
  let scaled = mantissa * 10n ** BigInt(digits);
  if (exponent >= 0) scaled <<= BigInt(exponent);
  else {
    const divisor = 1n << BigInt(-exponent);
    const quotient = scaled / divisor;
    const twiceRemainder = (scaled % divisor) * 2n;
    const roundUp = twiceRemainder > divisor || (twiceRemainder === divisor && (quotient & 1n) === 1n);
    scaled = roundUp ? quotient + 1n : quotient;
  }
  const text = scaled.toString().padStart(digits + 1, "0");
  const point = text.length - digits;
  const body = digits === 0 ? text : `${text.slice(0, point)}.${text.slice(point)}`;
  return negative ? `-${body}` : body;
}

/**
 * C's `%.<digits>f` for any double. A NaN that reaches Redis's printf comes out of libm (asin of
 * a value just past 1) with its sign bit set, which glibc prints as "-nan".
 */
export function formatFixed(value: number, digits: number): string {
  if (Number.isNaN(value)) return "-nan";
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  return fixedFinite(value, digits);
}

/** Decimal places of Redis's distances ("5.2145 meters away" reads better than 17 digits). */
const distanceDigits = 4;
/** Decimal places of Redis's "human" long doubles (GEOPOS, WITHCOORD): `%.17Lf`, zeros trimmed. */
const humanDigits = 17;
/** Decimal places of C's plain `%f`, used in the invalid coordinate error. */
const printfDefaultDigits = 6;

/** A distance as GEODIST and WITHDIST print it: `%.4f`. */
export const formatDistance = (meters: number) => formatFixed(meters, distanceDigits);

/** A coordinate in an error message: `%f`. */
export const formatPrintf = (value: number) => formatFixed(value, printfDefaultDigits);

/**
 * A coordinate as GEOPOS and WITHCOORD print it: 17 decimal places, then trailing zeros and a
 * bare point dropped, and "-0" written as "0".
 */
export function formatHuman(value: number): string {
  let text = formatFixed(value, humanDigits);
  if (!Number.isFinite(value)) return text;
  text = text.replace(/0+$/, "").replace(/\.$/, "");
  return text === "-0" ? "0" : text;
}
