/**
 * Which user feeds which of a session's slots. Called whenever the inputs change (a peer set,
 * someone joining or leaving, a new audio-level report); returns the next assignment.
 *
 * Rules, in order:
 *  1. A slot whose user this session no longer hears (left the peer set, left the room, stopped
 *     sending) is freed at once.
 *  2. Sticky: a slot whose user is still heard keeps that user unless the slot is needed for a
 *     louder speaker and its user is silent. A speaking user is never displaced, not even by a
 *     louder one, so voices do not flicker between slots.
 *  3. Free slots are filled, loudest speaker first, then silent users who spoke most recently, so
 *     a client with enough slots hears everyone from the first packet.
 *  4. When every slot is taken, each still-unplaced speaker (loudest first) takes the slot of the
 *     silent user who has been quiet longest; silent users never displace anyone.
 *
 * Pure: no clock, no I/O; the same input gives the same output.
 */

export interface SlotChoiceInput {
  /** Current user per slot, in slot order; null is a free slot. */
  slots: readonly (string | null)[];
  /** Users this session may hear right now: in its peer set, in the room, sending, not itself. */
  audible: { has(user: string): boolean };
  /**
   * Users in priority order (rankUsers), at least every audible one. A room ranks its senders
   * once per change, and each session's choice walks the ranking only as far as it needs.
   */
  ranking: readonly string[];
  /** Users speaking now, with their level in dBov (higher is louder). */
  levels: ReadonlyMap<string, number>;
  /** When each user last spoke (any monotonic unit); absent means never. */
  lastSpoke: ReadonlyMap<string, number>;
}

type Priorities = Pick<SlotChoiceInput, "levels" | "lastSpoke">;

function byPriority(input: Priorities): (a: string, b: string) => number {
  return (a, b) => {
    const la = input.levels.get(a);
    const lb = input.levels.get(b);
    if (la !== undefined || lb !== undefined) {
      if (la === undefined) return 1;
      if (lb === undefined) return -1;
      if (la !== lb) return lb - la;
    }
    const sa = input.lastSpoke.get(a) ?? -Infinity;
    const sb = input.lastSpoke.get(b) ?? -Infinity;
    if (sa !== sb) return sb > sa ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  };
}

/** The slot of the silent holder who has been quiet longest (lowest index on ties), or -1. */
function displaceable(slots: readonly (string | null)[], input: SlotChoiceInput): number {
  let best = -1;
  let bestSpoke = Infinity;
  slots.forEach((user, index) => {
    if (user === null || input.levels.has(user)) return;
    const spoke = input.lastSpoke.get(user) ?? -Infinity;
    if (spoke < bestSpoke) {
      best = index;
      bestSpoke = spoke;
    }
  });
  return best;
}

/** `users` from the one a slot should go to first to the last: loudest, then most recently heard. */
export function rankUsers(users: Iterable<string>, priorities: Priorities): string[] {
  return [...users].sort(byPriority(priorities));
}

export function chooseSlots(input: SlotChoiceInput): (string | null)[] {
  const slots = input.slots.map((user) => (user !== null && input.audible.has(user) ? user : null));
  const placed = new Set(slots.filter((u): u is string => u !== null));
  for (const user of input.ranking) {
    if (placed.has(user) || !input.audible.has(user)) continue;
    let index = slots.indexOf(null);
    if (index === -1) {
      if (!input.levels.has(user)) break;
      index = displaceable(slots, input);
      if (index === -1) break;
    }
    slots[index] = user;
  }
  return slots;
}
