/**
 * Glob-style matching with Redis's rules (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET): `*` any run,
 * `?` one char, `[abc]`, `[^a-z]` classes, `\x` a literal x. Matching is by char code; keys are
 * latin1 byte strings, so that is byte-wise as in Redis.
 */

/** A char code with ASCII upper case folded to lower case when `nocase`. */
const fold = (c: number, nocase: boolean) => (nocase && c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Matches char `c` against a bracket class starting after "[" at `p`; returns the index after its
 * "]", or -1 when `c` does not match (the caller then has no use for the index).
 */
function matchClass(pattern: string, p: number, c: number, nocase: boolean): number {
  let negate = false;
  if (pattern[p] === "^") {
    negate = true;
    p++;
  }
  let matched = false;
  const target = fold(c, nocase);
  while (p < pattern.length && pattern[p] !== "]") {
    if (pattern[p] === "\\" && p + 1 < pattern.length) {
      p++;
      if (fold(pattern.charCodeAt(p), nocase) === target) matched = true;
      p++;
    } else if (pattern[p + 1] === "-" && p + 2 < pattern.length && pattern[p + 2] !== "]") {
      const a = fold(pattern.charCodeAt(p), nocase);
      const b = fold(pattern.charCodeAt(p + 2), nocase);
      if (target >= Math.min(a, b) && target <= Math.max(a, b)) matched = true;
      p += 3;
    } else {
      if (fold(pattern.charCodeAt(p), nocase) === target) matched = true;
      p++;
    }
  }
  if (matched === negate) return -1;
  // An unterminated class ends at the pattern's end, as in Redis.
  return p < pattern.length ? p + 1 : p;
}

/** Equal chars, or (when `nocase`) the same ASCII letter in either case. */
const sameChar = (a: number, b: number, nocase: boolean) =>
  a === b || (nocase && (a | 0x20) === (b | 0x20) && (a | 0x20) >= 97 && (a | 0x20) <= 122);

/** matchFrom's answers: a match; no match from here; no match from here or any later start. */
const matchFound = 1;
const noMatch = 0;
const noLaterMatch = -1;

export function globMatch(pattern: string, text: string, nocase = false): boolean {
  return matchFrom(pattern, 0, text, 0, nocase) === matchFound;
}

function matchFrom(pattern: string, p: number, text: string, t: number, nocase: boolean): number {
  while (p < pattern.length) {
    const pc = pattern[p]!;
    if (pc === "*") {
      while (pattern[p + 1] === "*") p++;
      if (p + 1 === pattern.length) return matchFound;
      for (let i = t; i <= text.length; i++) {
        const result = matchFrom(pattern, p + 1, text, i, nocase);
        if (result !== noMatch) return result;
      }
      // The rest of the pattern matches from no position of the text. An earlier "*" taking more
      // of the text would only bring this one to a later position, so it gives up too (Redis's
      // skipLongerMatches): without this, patterns like "*a*a*a*b" take exponential time.
      return noLaterMatch;
    }
    if (t >= text.length) return noMatch;
    if (pc === "?") {
      p++;
      t++;
    } else if (pc === "[") {
      const next = matchClass(pattern, p + 1, text.charCodeAt(t), nocase);
      if (next < 0) return noMatch;
      p = next;
      t++;
    } else {
      if (pc === "\\" && p + 1 < pattern.length) p++;
      if (!sameChar(pattern.charCodeAt(p), text.charCodeAt(t), nocase)) return noMatch;
      p++;
      t++;
    }
  }
  return t === text.length ? matchFound : noMatch;
}
