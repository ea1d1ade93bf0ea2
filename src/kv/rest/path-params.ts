/**
 * Path parameters as byte strings. Keys, fields and members may hold any bytes, sent
 * percent-encoded (`/kv/%FF%00` is the two-byte key FF 00). Bun's router matches on the raw
 * path but decodes parameters as UTF-8, turning %FF into U+FFFD, so we decode the raw segments
 * ourselves: each %XX is one byte, any other character stands for its UTF-8 bytes.
 */

/** Where a pattern's named segments sit: "/geo/:key/pos/:member" → key at 2, member at 4. */
export function paramPositions(pattern: string): Map<string, number> {
  const positions = new Map<string, number>();
  pattern.split("/").forEach((segment, i) => {
    if (segment.startsWith(":")) positions.set(segment.slice(1), i);
  });
  return positions;
}

/** The path of a request URL as sent (percent-encoded), without query or fragment. */
export function rawPath(url: string): string {
  const schemeEnd = url.indexOf("://");
  const start = url.indexOf("/", schemeEnd < 0 ? 0 : schemeEnd + 3);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  const fragment = url.indexOf("#", start);
  const end = Math.min(query < 0 ? url.length : query, fragment < 0 ? url.length : fragment);
  return url.slice(start, end);
}

const hex = /^[0-9A-Fa-f]{2}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is every ASCII byte, control characters included, on purpose
const plain = /^[\x00-\x7f]*$/;

/** One percent-encoded segment as a byte string; a "%" not followed by two hex digits is itself. */
export function decodeSegment(segment: string): string {
  if (!segment.includes("%") && plain.test(segment)) return segment;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c === 0x25 && hex.test(segment.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c < 0x80) bytes.push(c);
    else {
      // Raw non-ASCII in a path is unusual (clients percent-encode it); take it as UTF-8 text.
      const cp = segment.codePointAt(i)!;
      if (cp > 0xffff) i++;
      bytes.push(...Buffer.from(String.fromCodePoint(cp), "utf8"));
    }
  }
  return Buffer.from(bytes).toString("latin1");
}

/**
 * The named parameters of a request for a route, as byte strings. `decoded` are Bun's. When each
 * is ASCII, Bun's decoding was already byte for byte: every %XX in them was below 0x80 (a byte
 * above, or a bad escape, decodes to a non-ASCII character), so the common case costs no parsing
 * and does not even build the URL string. Otherwise the raw path (`url()`) is decoded again.
 */
export function pathParams(decoded: Record<string, string>, positions: ReadonlyMap<string, number>, url: () => string): Record<string, string> {
  let allAscii = true;
  for (const name in decoded) allAscii &&= plain.test(decoded[name]!);
  if (allAscii) return decoded;
  const segments = rawPath(url()).split("/");
  const params: Record<string, string> = {};
  for (const [name, i] of positions) params[name] = decodeSegment(segments[i] ?? "");
  return params;
}
