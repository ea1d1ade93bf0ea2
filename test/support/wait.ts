/** Waiting in tests for something that happens in another process or on the network. */

/**
 * Polls `probe` every `pollMs` until it returns something other than undefined; throws after
 * `timeoutMs` (a bound for a loaded machine, not a timing claim). A probe that throws ends the wait.
 */
export async function waitUntil<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 10_000, pollMs = 10): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(pollMs);
  }
}
