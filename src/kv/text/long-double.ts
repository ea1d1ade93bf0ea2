/**
 * INCRBYFLOAT and HINCRBYFLOAT arithmetic, exactly as Redis does it on x86-64: parse both operands
 * with strtold into an 80-bit long double (64-bit mantissa), add once, and print with "%.17Lf"
 * with trailing zeros removed. Doing the sum in doubles would answer differently from Redis in the
 * last digits (0.1 + 0.2 is "0.3" in Redis, "0.30000000000000004" in doubles), so we model the
 * long double exactly: a value is mantissa × 2^exponent with BigInt arithmetic and
 * round-half-even wherever the hardware would round.
 */
import { hexFloatPattern, infinityPattern } from "./args.ts";
import { KvError, notAFloat } from "./errors.ts";

/** A finite long double: (-1)^negative × mantissa × 2^exponent, mantissa < 2^64. */
interface LongDouble {
  negative: boolean;
  mantissa: bigint;
  exponent: number;
}

/** Significant bits of the x87 extended format's mantissa. */
const mantissaBits = 64;
/** The exponent of the smallest subnormal's unit bit (2^-16445). */
const exponentMin = -16445;
/** Values from 2^16384 up are beyond the largest finite long double. */
const overflowExponent = 16384;
/** Redis's MAX_LONG_DOUBLE_CHARS: longer operands are refused before parsing. */
const operandCharsMax = 5 * 1024;
/** Decimal exponents beyond this overflow or underflow a long double whatever the digits. */
const decimalMagnitudeMax = 5000;
/** "%.17Lf": digits after the point before trimming. */
const fractionDigits = 17;

const bitLength = (n: bigint) => (n === 0n ? 0 : n.toString(2).length);

/** Rounds num/den × 2^scale to the nearest long double (ties to even); null when it overflows. */
function round(negative: boolean, num: bigint, den: bigint, scale: number): LongDouble | null {
  if (num === 0n) return { negative, mantissa: 0n, exponent: 0 };
  // Choose the exponent so the quotient has exactly 64 bits, or fewer for a subnormal.
  let exponent = bitLength(num) - bitLength(den) - mantissaBits + scale;
  const quotientAt = (e: number) => {
    const shift = e - scale;
    return shift >= 0 ? { n: num, d: den << BigInt(shift) } : { n: num << BigInt(-shift), d: den };
  };
  let { n, d } = quotientAt(exponent);
  if (n / d >= 1n << BigInt(mantissaBits)) ({ n, d } = quotientAt(++exponent));
  else if (n / d < 1n << BigInt(mantissaBits - 1)) ({ n, d } = quotientAt(--exponent));
  if (exponent < exponentMin) ({ n, d } = quotientAt((exponent = exponentMin)));
  let mantissa = n / d;
  const twiceRemainder = 2n * (n - mantissa * d);
  if (twiceRemainder > d || (twiceRemainder === d && (mantissa & 1n) === 1n)) mantissa++;
  if (mantissa === 1n << BigInt(mantissaBits)) {
    mantissa >>= 1n;
    exponent++;
  }
  if (mantissa !== 0n && exponent + bitLength(mantissa) > overflowExponent) return null;
  return { negative, mantissa, exponent };
}

const decimalPattern = /^([+-]?)(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$/;

export type Parsed = LongDouble | "inf" | "-inf" | null;

/** strtold as Redis's string2ld uses it: the whole text must parse, no NaN, no ERANGE to 0 or inf. */
export function parseLongDouble(text: string): Parsed {
  if (text.length === 0 || text.length >= operandCharsMax) return null;
  if (infinityPattern.test(text)) return text.startsWith("-") ? "-inf" : "inf";
  let negative: boolean;
  let num: bigint;
  let den = 1n;
  let scale = 0;
  const hex = hexFloatPattern.exec(text);
  const decimal = hex === null ? decimalPattern.exec(text) : null;
  if (hex !== null) {
    const [, sign, whole, fraction, exp] = hex as unknown as [string, string, string, string, string | undefined];
    if (whole + fraction === "") return null;
    negative = sign === "-";
    num = BigInt(`0x${whole}${fraction}`);
    scale = Number(exp ?? 0) - 4 * fraction.length;
  } else if (decimal !== null) {
    const [, sign, whole, fraction, exp] = decimal as unknown as [string, string, string, string, string | undefined];
    if (whole + fraction === "") return null;
    negative = sign === "-";
    num = BigInt(whole + fraction);
    const power = Number(exp ?? 0) - fraction.length;
    // Far outside the format's range (about 1e-4951 to 1e4932) the answer is ERANGE either way;
    // deciding that first keeps the BigInt powers small.
    const magnitude = power + num.toString().length;
    if (num !== 0n && (magnitude > decimalMagnitudeMax || magnitude < -decimalMagnitudeMax)) return null;
    if (power >= 0) num *= 10n ** BigInt(power);
    else den = 10n ** BigInt(-power);
  } else return null;
  if (num === 0n) return { negative, mantissa: 0n, exponent: 0 };
  const value = round(negative, num, den, scale);
  // strtold reports ERANGE for overflow and for a nonzero value that rounds to zero.
  if (value === null || value.mantissa === 0n) return null;
  return value;
}

const llongMax = (1n << 63n) - 1n;
const llongMin = -(1n << 63n);

/**
 * `(long long) ceill(seconds * 1000.0)` with `seconds` a long double, as Redis 7.0 converts a
 * blocking command's timeout on x86-64: the product is rounded to a long double and rounded up to
 * a whole millisecond; a result outside the long long range (infinity included) converts to
 * LLONG_MIN, which is what the conversion instruction gives for every out-of-range value.
 */
export function secondsToMillisLongLong(seconds: Exclude<Parsed, null>): bigint {
  if (seconds === "inf" || seconds === "-inf") return llongMin;
  const product = round(seconds.negative, seconds.mantissa * 1000n, 1n, seconds.exponent);
  if (product === null) return llongMin;
  let whole: bigint;
  let fractional = false;
  if (product.exponent >= 0) whole = product.mantissa << BigInt(product.exponent);
  else {
    whole = product.mantissa >> BigInt(-product.exponent);
    fractional = whole << BigInt(-product.exponent) !== product.mantissa;
  }
  // Up means away from zero for a positive product and toward it for a negative one.
  const ceiling = product.negative ? -whole : fractional ? whole + 1n : whole;
  return ceiling > llongMax || ceiling < llongMin ? llongMin : ceiling;
}

function add(a: LongDouble, b: LongDouble): LongDouble | null {
  const exponent = Math.min(a.exponent, b.exponent);
  const signed = (v: LongDouble) => (v.negative ? -v.mantissa : v.mantissa) << BigInt(v.exponent - exponent);
  const sum = signed(a) + signed(b);
  // x87 gives +0 for x + (-x) in round-to-nearest, and -0 only for -0 + -0.
  const negative = sum < 0n || (sum === 0n && a.negative && b.negative);
  return round(negative, sum < 0n ? -sum : sum, 1n, exponent);
}

/** "%.17Lf" (exact decimal expansion, half-even rounding) with trailing zeros and "-0" removed. */
export function formatLongDouble(v: LongDouble): string {
  const scaledNum = v.mantissa * 10n ** BigInt(fractionDigits);
  let digits: bigint;
  if (v.exponent >= 0) digits = scaledNum << BigInt(v.exponent);
  else {
    const den = 1n << BigInt(-v.exponent);
    digits = scaledNum / den;
    const twiceRemainder = 2n * (scaledNum - digits * den);
    if (twiceRemainder > den || (twiceRemainder === den && (digits & 1n) === 1n)) digits++;
  }
  const text = digits.toString().padStart(fractionDigits + 1, "0");
  const whole = text.slice(0, -fractionDigits);
  const fraction = text.slice(-fractionDigits).replace(/0+$/, "");
  const unsigned = fraction === "" ? whole : `${whole}.${fraction}`;
  return v.negative && unsigned !== "0" ? `-${unsigned}` : unsigned;
}

/** `a + b` as INCRBYFLOAT and HINCRBYFLOAT store it; Redis's error for an infinite operand or sum. */
export function sumText(a: Exclude<Parsed, null>, b: Exclude<Parsed, null>): string {
  const sum = typeof a === "string" || typeof b === "string" ? null : add(a, b);
  if (sum === null) throw new KvError("ERR increment would produce NaN or Infinity");
  return formatLongDouble(sum);
}

/** `current + increment` as INCRBYFLOAT computes and stores it. */
export function incrByFloat(current: string, increment: string): string {
  const a = parseLongDouble(current);
  const b = parseLongDouble(increment);
  if (a === null || b === null) throw notAFloat();
  return sumText(a, b);
}
