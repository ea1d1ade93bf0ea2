/** Sequence numbers on one slot, as the media tests check them (RFC 3550 serial arithmetic). */
import { expect } from "bun:test";
import type { Received } from "./peer.ts";

/** The step between each packet and the one before it, mod 2^16. */
export function sequenceSteps(list: readonly Received[]): number[] {
  return list.slice(1).map((r, i) => (r.sequenceNumber - list[i]!.sequenceNumber + 0x10000) % 0x10000);
}

/** Sequence numbers step forward (mod 2^16) between consecutive packets. */
export function expectMonotonic(list: readonly Received[]): void {
  for (const step of sequenceSteps(list)) {
    expect(step).toBeGreaterThan(0);
    expect(step).toBeLessThan(0x8000);
  }
}
