/** The timeout argument of the blocking commands (BLPOP, BLMOVE, BZPOPMIN, ...). */
import { parseSmallInteger } from "../text/args.ts";
import { KvError } from "../text/errors.ts";
import { parseLongDouble, secondsToMillisLongLong } from "../text/long-double.ts";

/**
 * A blocking command's timeout in seconds as an absolute deadline in Unix milliseconds; Infinity
 * means no deadline. Exactly as Redis 7.0 reads it: the text is a long double (strtold), and its
 * milliseconds, rounded up, are converted to a long long without a range check. So ±inf and
 * anything past 2^63 ms answer "timeout is negative"; any positive amount under a millisecond
 * waits one millisecond; and a negative amount above -1 ms — -0.0005, and -0.001 itself, whose
 * long double is a hair above -1/1000 — rounds up to 0, which blocks forever.
 */
export function parseTimeout(text: string, nowMs: number): number {
  // Whole seconds are the common case, and exact in every format: no long double needed.
  const whole = parseSmallInteger(text);
  if (whole !== null) {
    if (whole < 0) throw new KvError("ERR timeout is negative");
    return whole === 0 ? Infinity : nowMs + whole * 1000;
  }
  const seconds = parseLongDouble(text);
  if (seconds === null) throw new KvError("ERR timeout is not a float or out of range");
  const ms = secondsToMillisLongLong(seconds);
  if (ms < 0n) throw new KvError("ERR timeout is negative");
  return ms === 0n ? Infinity : nowMs + Number(ms);
}
