/**
 * Programmer errors: a broken invariant inside svc. They throw loudly and are logged as bugs.
 * Nothing a client sends may ever reach one — bad input is an operating error (see errors.ts).
 */

export class AssertionError extends Error {
  override name = "AssertionError";
}

/** Throws an AssertionError when `condition` is false. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

/** Marks a branch the type checker proves unreachable; reaching it at run time is a bug. */
export function unreachable(value: never, message = "unreachable"): never {
  throw new AssertionError(`${message}: ${String(value)}`);
}
