/** The SHA-1 of a byte string (latin1: one char per byte), 40 hex digits in lower case: a script's name, and redis.sha1hex. */
export function sha1Hex(text: string): string {
  return new Bun.CryptoHasher("sha1").update(Buffer.from(text, "latin1")).digest("hex");
}
