/**
 * The sequence window of one idempotent producer in one partition (spec: "Idempotent produce, per
 * partition"): the next sequence it is expected to send, and the offsets of its last
 * `idempotentSequenceWindow` (128) accepted records, so a retry of any of them is answered with the
 * offset it was first written at instead of being written again.
 *
 * Pure bookkeeping, no I/O: producer-journal.ts makes it durable, idempotent.ts applies it to a request.
 */
import { idempotentSequenceWindow } from "../../core/limits.ts";

export type SequenceDecision =
  | { kind: "accept" }
  | { kind: "duplicate"; offset: number }
  /** Skips ahead of `expected`: the records in between were never written. */
  | { kind: "gap"; expected: number }
  /** Older than the window: its offset is no longer known, so it can be neither written nor answered. */
  | { kind: "too_low"; lowest: number };

export class SequenceWindow {
  /**
   * @param next the sequence expected next; a producer new to the partition starts at 0 (as in Kafka)
   * @param offsets offsets of sequences next - offsets.length .. next - 1, oldest first
   */
  constructor(
    public next = 0,
    private offsets: number[] = [],
    private readonly size = idempotentSequenceWindow,
  ) {}

  /** Lowest sequence still answered as a duplicate. */
  get lowest(): number {
    return this.next - this.offsets.length;
  }

  decide(sequence: number): SequenceDecision {
    if (sequence === this.next) return { kind: "accept" };
    if (sequence > this.next) return { kind: "gap", expected: this.next };
    if (sequence >= this.lowest) return { kind: "duplicate", offset: this.offsets[sequence - this.lowest]! };
    return { kind: "too_low", lowest: this.lowest };
  }

  /** Records that sequence `next` was written at `offset`, forgetting the oldest past the window. */
  accept(offset: number): void {
    this.offsets.push(offset);
    if (this.offsets.length > this.size) this.offsets.shift();
    this.next++;
  }

  /**
   * Forgets the sequences whose records are at or past `highWatermark` (they did not survive a
   * crash); sequences are written in offset order, so they are the newest ones.
   */
  truncateTo(highWatermark: number): void {
    while (this.offsets.length > 0 && this.offsets[this.offsets.length - 1]! >= highWatermark) {
      this.offsets.pop();
      this.next--;
    }
  }

  clone(): SequenceWindow {
    return new SequenceWindow(this.next, [...this.offsets], this.size);
  }

  toJSON(): { next: number; offsets: number[] } {
    return { next: this.next, offsets: [...this.offsets] };
  }
}
