/**
 * Text a store can keep exactly. PostgreSQL's TEXT cannot hold the NUL character (the insert
 * fails), and an unpaired UTF-16 surrogate has no UTF-8 form: both drivers would store U+FFFD in
 * its place, so the client would read back something other than what it wrote. JSON can carry
 * either ("\u0000", "\ud800"), so every client text bound for the store is checked here first.
 */

/** Why `text` cannot be stored as sent, or null when it can. */
export function storableTextProblem(text: string): string | null {
  if (text.includes("\u0000")) return "must not contain the NUL character";
  if (!text.isWellFormed()) return "must be valid Unicode text (no unpaired surrogates)";
  return null;
}
