import { getSystemErrorMessage } from "node:util";

/**
 * An operating-system error as C's strerror words it ("No space left on device"), which is what
 * Redis puts in its replies; libuv's text is the same but for its first letter. Anything else is
 * its message.
 */
export function systemErrorText(error: unknown): string {
  const errno = (error as { errno?: unknown } | null)?.errno;
  if (typeof errno === "number") {
    // Node's errors carry libuv's negative numbers; Bun's socket errors the positive errno.
    const text = getSystemErrorMessage(-Math.abs(errno));
    return text.charAt(0).toUpperCase() + text.slice(1);
  }
  return error instanceof Error ? error.message : String(error);
}
