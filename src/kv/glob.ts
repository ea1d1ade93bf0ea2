/**
 * Glob-style matching with Redis's rules (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET): `*` any run,
 * `?` one char, `[abc]`, `[^a-z]` classes, `\x` a literal x. Matching is by char code; keys are
 * latin1 byte strings, so that is byte-wise as in Redis.
 */

/** Matches a bracket class starting after "[" at `p`; returns [matched, index after "]"]. */
function matchClass(pattern: string, p: number, c: number, nocase: boolean): [boolean, number] {
  let negate = false;
  if (pattern[p] === "^") {
    negate = true;
    p++;
  }
  let matched = false;
  const fold = (x: number) => (nocase && x >= 65 && x <= 90 ? x + 32 : x);
  const target = fold(c);
  while (p < pattern.length && pattern[p] !== "]") {
    if (pattern[p] === "\\" && p + 1 < pattern.length) {
      p++;
      if (fold(pattern.charCodeAt(p)) === target) matched = true;
      p++;
    } else if (pattern[p + 1] === "-" && p + 2 < pattern.length && pattern[p + 2] !== "]") {
      let lo = fold(pattern.charCodeAt(p));
      let hi = fold(pattern.charCodeAt(p + 2));
      if (lo > hi) [lo, hi] = [hi, lo];
      if (target >= lo && target <= hi) matched = true;
      p += 3;
    } else {
      if (fold(pattern.charCodeAt(p)) === target) matched = true;
      p++;
    }
  }
  // An unterminated class ends at the pattern's end, as in Redis.
  return [negate ? !matched : matched, p < pattern.length ? p + 1 : p];
}

export function globMatch(pattern: string, text: string, nocase = false): boolean {
  return matchFrom(pattern, 0, text, 0, nocase);
}

function matchFrom(pattern: string, p: number, text: string, t: number, nocase: boolean): boolean {
  const same = (a: number, b: number) =>
    a === b || (nocase && (a | 0x20) === (b | 0x20) && ((a | 0x20) >= 97 && (a | 0x20) <= 122));
  while (p < pattern.length) {
    const pc = pattern[p]!;
    if (pc === "*") {
      while (pattern[p + 1] === "*") p++;
      if (p + 1 === pattern.length) return true;
      for (let i = t; i <= text.length; i++) if (matchFrom(pattern, p + 1, text, i, nocase)) return true;
      return false;
    }
    if (t >= text.length) return false;
    if (pc === "?") {
      p++;
      t++;
    } else if (pc === "[") {
      const [ok, next] = matchClass(pattern, p + 1, text.charCodeAt(t), nocase);
      if (!ok) return false;
      p = next;
      t++;
    } else {
      if (pc === "\\" && p + 1 < pattern.length) p++;
      if (!same(pattern.charCodeAt(p), text.charCodeAt(t))) return false;
      p++;
      t++;
    }
  }
  return t === text.length;
}
