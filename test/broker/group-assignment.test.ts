// The consumer group's partition assignment (src/broker/groups/assignment.ts) under fast-check:
// over random sequences of members joining, leaving and timing out, every partition has exactly
// one owner, shares differ by at most one, and a rebalance moves no more partitions than the
// fewest any even assignment could (found by brute force on small groups).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { assignPartitions, movedPartitions, type PartitionId } from "../../src/broker/groups/assignment.ts";

type Assignment = Map<string, PartitionId[]>;

function expectWhole(assignment: Assignment, partitions: readonly PartitionId[], members: readonly string[]): void {
  expect([...assignment.keys()].sort()).toEqual([...new Set(members)].sort());
  const owned = [...assignment.values()].flat();
  // With no member, nothing is owned.
  expect(owned.sort()).toEqual(members.length === 0 ? [] : [...partitions].sort());
  const shares = [...assignment.values()].map((p) => p.length);
  if (shares.length > 0) expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
}

/** The fewest partitions any even assignment moves from `previous`: every assignment tried. */
function fewestMoves(partitions: readonly PartitionId[], members: readonly string[], previous: Assignment): number {
  const m = members.length;
  if (m === 0) return 0;
  let best = Infinity;
  const owners = new Array<number>(partitions.length).fill(0);
  const total = m ** partitions.length;
  for (let n = 0; n < total; n++) {
    let rest = n;
    const counts = new Array<number>(m).fill(0);
    for (let i = 0; i < partitions.length; i++) {
      owners[i] = rest % m;
      rest = Math.floor(rest / m);
      counts[owners[i]!]!++;
    }
    if (Math.max(...counts) - Math.min(...counts) > 1) continue;
    const after: Assignment = new Map(members.map((member) => [member, []]));
    partitions.forEach((p, i) => after.get(members[owners[i]!]!)!.push(p));
    best = Math.min(best, movedPartitions(previous, after));
  }
  return best;
}

const memberNames = ["m1", "m2", "m3", "m4", "m5"];
const step = fc.oneof(
  fc.record({ kind: fc.constant("join" as const), member: fc.constantFrom(...memberNames) }),
  fc.record({ kind: fc.constantFrom("leave" as const, "timeout" as const), member: fc.constantFrom(...memberNames) }),
);

describe("group assignment", () => {
  test("over random joins, leaves and timeouts: whole, even, and moving no more than the fewest possible (brute force, up to 6 partitions)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.array(step, { maxLength: 12 }), (partitionCount, steps) => {
        const partitions = Array.from({ length: partitionCount }, (_, i) => `t/${i}`);
        let members: string[] = [];
        let assignment: Assignment = new Map();
        for (const s of steps) {
          // A timeout removes a silent member as a leave does.
          members = s.kind === "join" ? [...new Set([...members, s.member])] : members.filter((m) => m !== s.member);
          const next = assignPartitions(partitions, members, assignment);
          expectWhole(next, partitions, members);
          if (members.length <= 4) expect(movedPartitions(assignment, next)).toBe(fewestMoves(partitions, [...members].sort(), assignment));
          assignment = next;
        }
      }),
      { numRuns: 300 },
    );
  });

  test("larger groups stay whole and even, and a rebalance moves only the partitions it must", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 49 }), (partitionCount, memberCount, leaver) => {
        const partitions = Array.from({ length: partitionCount }, (_, i) => `t/${i}`);
        const members = Array.from({ length: memberCount }, (_, i) => `m${String(i).padStart(2, "0")}`);
        const before = assignPartitions(partitions, members, new Map());
        expectWhole(before, partitions, members);
        // One more member: it takes only its share; nothing else moves.
        const joined = assignPartitions(partitions, [...members, "new"], before);
        expectWhole(joined, partitions, [...members, "new"]);
        expect(movedPartitions(before, joined)).toBe(joined.get("new")!.length + movedAmongStayers(before, joined));
        expect(movedAmongStayers(before, joined)).toBe(0);
        // One member leaves: only its partitions move.
        const gone = members[leaver % memberCount]!;
        const left = assignPartitions(
          partitions,
          members.filter((m) => m !== gone),
          before,
        );
        expectWhole(
          left,
          partitions,
          members.filter((m) => m !== gone),
        );
        if (memberCount > 1) expect(movedPartitions(before, left)).toBe(before.get(gone)!.length + movedAmongStayers(before, left));
      }),
      { numRuns: 200 },
    );
  });

  test("the same input gives the same assignment; unknown previous partitions and members are ignored", () => {
    const partitions = ["a/0", "a/1", "b/0"];
    const previous = new Map([
      ["m1", ["a/0", "gone/0"]],
      ["left", ["a/1"]],
    ]);
    const first = assignPartitions(partitions, ["m2", "m1"], previous);
    expect(first).toEqual(assignPartitions(partitions, ["m1", "m2"], previous));
    expect(first.get("m1")).toContain("a/0");
    expectWhole(first, partitions, ["m1", "m2"]);
    expect(assignPartitions(partitions, [], previous).size).toBe(0);
  });
});

/**
 * Partitions that moved away from a member still in the group although that member did not
 * hold more than its new share: with an even split from an even one, a join or a leave leaves
 * these at 0 unless shares had to shrink.
 */
function movedAmongStayers(before: Assignment, after: Assignment): number {
  let moved = 0;
  for (const [member, owned] of before) {
    const now = after.get(member);
    if (now === undefined) continue;
    const lost = owned.filter((p) => !now.includes(p)).length;
    // Losing down to its new share is what an even split requires.
    moved += Math.max(0, lost - Math.max(0, owned.length - now.length));
  }
  return moved;
}
