/**
 * Doubles as Redis writes them in replies and in the append-only file.
 */

const trimFraction = (digits: string) => (digits.includes(".") ? digits.replace(/\.?0+$/, "") : digits);

/**
 * A double as Redis 7.0 replies with it (ZSCORE, ZINCRBY, WITHSCORES): C's `%.17g` — 17
 * significant digits, trailing zeros dropped, exponent form below 1e-4 and from 1e17 with at
 * least two exponent digits. JavaScript's own shortest form differs (1.1 vs 1.1000000000000001).
 */
export function formatDouble(n: number): string {
  // Integer scores are the common case: up to 2^53 they have at most 16 digits, which `%.17g`
  // prints exactly, as String does, without the exponent and fixed-point round trip below.
  if (Number.isSafeInteger(n)) return String(n);
  if (Number.isNaN(n)) return "nan";
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  const [mantissa, exponentText] = n.toExponential(16).split("e") as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 17) {
    return `${trimFraction(mantissa)}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return trimFraction(n.toFixed(16 - exponent));
}
