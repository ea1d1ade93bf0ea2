/**
 * Glob-style matching with Redis's rules (KEYS, SCAN MATCH, PSUBSCRIBE, ACL key and channel
 * patterns, CONFIG GET, COMMAND LIST PATTERN): `*` any run, `?` one char, `[abc]`, `[^a-z]`
 * classes, `\x` a literal x. Matching is by char code; keys are latin1 byte strings, so that is
 * byte-wise as in Redis, down to its quirks:
 * - an empty string matches only the empty pattern (not even `*`);
 * - in a class, `a-]` is a range (it does not close the class), an unclosed class ends with the
 *   pattern, an escaped char is compared without `nocase`, and a range's ends and the char are
 *   compared as C's signed chars (bytes 0x80–0xFF below 0), after folding case when `nocase`;
 * - a pattern whose match would pass more than kvGlobStarsMax runs of `*` matches nothing.
 *
 * The matcher is a loop, not a recursion: each `*` remembers where it stands, and a mismatch goes
 * back to the last `*` only, which takes one more char. Going back to an earlier `*` could only
 * move the later one further on, which already failed (Redis's skipLongerMatches makes the same
 * cut), so a pattern costs at most its length times the string's, and no pattern can exhaust the
 * stack (a recursive matcher met 50,000 `*?` with a stack overflow).
 */
import { kvGlobStarsMax } from "../../core/limits.ts";

const STAR = 0x2a;
const QUESTION = 0x3f;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const CARET = 0x5e;
const DASH = 0x2d;
const BACKSLASH = 0x5c;

/** ASCII upper case folded to lower, as C's tolower in the C locale. */
const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);
/** A byte as C's signed char holds it. */
const signed = (c: number) => (c >= 128 ? c - 256 : c);

/**
 * Whether char `c` matches the class whose "[" is at `open`, and where the class ends: the index
 * after its "]", or the pattern's end for a class never closed. Where it ends does not depend on
 * `c`, which is what lets the matcher step over it.
 */
function matchClass(pattern: string, open: number, c: number, nocase: boolean): { matched: boolean; next: number } {
  const end = pattern.length;
  let p = open + 1;
  const negate = p < end && pattern.charCodeAt(p) === CARET;
  if (negate) p++;
  let matched = false;
  for (;;) {
    if (p >= end) return { matched: matched !== negate, next: end };
    const pc = pattern.charCodeAt(p);
    if (pc === BACKSLASH && end - p >= 2) {
      // Compared as it is, even when `nocase` (Redis does).
      if (pattern.charCodeAt(p + 1) === c) matched = true;
      p += 2;
    } else if (pc === CLOSE) {
      return { matched: matched !== negate, next: p + 1 };
    } else if (end - p >= 3 && pattern.charCodeAt(p + 1) === DASH) {
      let from = signed(pc);
      let to = signed(pattern.charCodeAt(p + 2));
      if (from > to) [from, to] = [to, from];
      let x = signed(c);
      if (nocase) {
        from = lower(from);
        to = lower(to);
        x = lower(x);
      }
      if (x >= from && x <= to) matched = true;
      p += 3;
    } else {
      if (nocase ? lower(pc) === lower(c) : pc === c) matched = true;
      p++;
    }
  }
}

export function globMatch(pattern: string, text: string, nocase = false): boolean {
  const patternEnd = pattern.length;
  const textEnd = text.length;
  if (textEnd === 0) return patternEnd === 0;
  let p = 0;
  let t = 0;
  // The last `*` met: the pattern after it, and the text position its rest was last tried at.
  let afterStar = -1;
  let starAt = 0;
  let stars = 0;
  for (;;) {
    let ok = false;
    if (t === textEnd) {
      // The text is used up: what is left of the pattern must be stars.
      while (p < patternEnd && pattern.charCodeAt(p) === STAR) p++;
      if (p === patternEnd) return true;
    } else if (p < patternEnd) {
      const pc = pattern.charCodeAt(p);
      if (pc === STAR) {
        while (p + 1 < patternEnd && pattern.charCodeAt(p + 1) === STAR) p++;
        if (p + 1 === patternEnd) return true;
        if (++stars > kvGlobStarsMax) return false;
        afterStar = ++p;
        starAt = t;
        continue;
      }
      const c = text.charCodeAt(t);
      if (pc === QUESTION) {
        ok = true;
        p++;
      } else if (pc === OPEN) {
        const { matched, next } = matchClass(pattern, p, c, nocase);
        ok = matched;
        p = next;
      } else {
        if (pc === BACKSLASH && patternEnd - p >= 2) p++;
        const lc = pattern.charCodeAt(p);
        ok = nocase ? lower(lc) === lower(c) : lc === c;
        p++;
      }
      if (ok) {
        t++;
        continue;
      }
    }
    // A mismatch: the last `*` takes one more char, while one is left for the rest to match.
    if (afterStar < 0 || ++starAt >= textEnd) return false;
    p = afterStar;
    t = starAt;
  }
}
