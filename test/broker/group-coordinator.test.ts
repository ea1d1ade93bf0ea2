// The consumer group coordinator on its own (src/broker/groups/coordinator.ts), with a clock
// the test moves: generations, heartbeats' three answers, the member timeout, one subscription
// per group, members bound to their key, fencing of a stale committer, and — over random
// sequences of joins, leaves, re-joins and timeouts — that every partition has one owner,
// shares are even, and only a change of membership starts a generation.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ManualClock } from "../../src/core/clock.ts";
import { SvcError } from "../../src/core/errors.ts";
import type { Actor } from "../../src/broker/auth/principal.ts";
import { GroupCoordinator } from "../../src/broker/groups/coordinator.ts";

const anyone: Actor = { key: null, actsForAnyKey: true };
const alice: Actor = { key: "alice", actsForAnyKey: false };
const bob: Actor = { key: "bob", actsForAnyKey: false };
const admin: Actor = { key: "root", actsForAnyKey: true };

function coordinator(partitions: Record<string, number>, timeoutMs = 10_000) {
  const clock = new ManualClock();
  const counts = new Map(Object.entries(partitions));
  const c = new GroupCoordinator(clock, timeoutMs, (topic) => counts.get(topic) ?? null);
  return { c, clock, counts };
}

function statusOf(fn: () => unknown): number | "ok" {
  try {
    fn();
    return "ok";
  } catch (error) {
    if (error instanceof SvcError) return error.status;
    throw error;
  }
}

describe("membership", () => {
  test("the first member gets every partition; a second takes half; generations count the rebalances", () => {
    const { c } = coordinator({ orders: 4 });
    const a = c.join("g", anyone, null, ["orders"]);
    expect(a.generation).toBe(1);
    expect(a.assignment.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    const b = c.join("g", anyone, null, ["orders"]);
    expect(b.generation).toBe(2);
    expect(b.assignment).toHaveLength(2);
    expect(c.heartbeat("g", anyone, a.member_id, 1)).toEqual({ status: "rebalance_required", generation: 2 });
    const aNow = c.assignment("g", anyone, a.member_id);
    expect(aNow.generation).toBe(2);
    // Sticky: the first member kept two of its four, and the two shares are disjoint.
    expect(aNow.assignment.every((p) => a.assignment.some((q) => q.partition === p.partition))).toBe(true);
    expect(new Set([...aNow.assignment, ...b.assignment].map((p) => p.partition)).size).toBe(4);
    expect(c.heartbeat("g", anyone, a.member_id, 2).status).toBe("ok");
  });

  test("a re-join with the member's id and the same topics changes nothing", () => {
    const { c } = coordinator({ orders: 3 });
    const a = c.join("g", anyone, null, ["orders"]);
    c.join("g", anyone, null, ["orders"]);
    const again = c.join("g", anyone, a.member_id, ["orders"]);
    expect(again.member_id).toBe(a.member_id);
    expect(again.generation).toBe(2);
  });

  test("leave hands the leaver's partitions to the others; a heartbeat from it is unknown_member", () => {
    const { c } = coordinator({ orders: 4 });
    const a = c.join("g", anyone, null, ["orders"]);
    const b = c.join("g", anyone, null, ["orders"]);
    expect(c.leave("g", anyone, b.member_id).generation).toBe(3);
    expect(c.assignment("g", anyone, a.member_id).assignment).toHaveLength(4);
    expect(c.heartbeat("g", anyone, b.member_id, 3).status).toBe("unknown_member");
    expect(c.heartbeat("nosuch", anyone, "x", 0)).toEqual({ status: "unknown_member", generation: 0 });
  });

  test("an emptied group is forgotten: joined again it starts at generation 1, and its old member stays unknown", () => {
    const { c } = coordinator({ orders: 2 });
    const a = c.join("g", anyone, null, ["orders"]);
    c.leave("g", anyone, a.member_id);
    expect(c.describe("g")).toBeNull();
    const b = c.join("g", anyone, null, ["orders"]);
    expect(b.generation).toBe(1);
    expect(c.heartbeat("g", anyone, a.member_id, 1).status).toBe("unknown_member");
  });

  test("a member silent for the timeout is removed at the next expiry check; one that heartbeats stays", () => {
    const { c, clock } = coordinator({ orders: 2 }, 1000);
    const a = c.join("g", anyone, null, ["orders"]);
    const b = c.join("g", anyone, null, ["orders"]);
    clock.advance(600);
    c.heartbeat("g", anyone, a.member_id, 2);
    clock.advance(399);
    expect(c.expire()).toEqual([]);
    clock.advance(1);
    expect(c.expire()).toEqual(["g"]);
    expect(c.heartbeat("g", anyone, b.member_id, 2).status).toBe("unknown_member");
    expect(c.heartbeat("g", anyone, a.member_id, 2).status).toBe("rebalance_required");
    expect(c.assignment("g", anyone, a.member_id)).toMatchObject({
      generation: 3,
      assignment: [
        { topic: "orders", partition: 0 },
        { topic: "orders", partition: 1 },
      ],
    });
  });

  test("a deleted topic's partitions leave the assignment", () => {
    const { c, counts } = coordinator({ a: 1, b: 2 });
    const m = c.join("g", anyone, null, ["a", "b"]);
    expect(m.assignment).toHaveLength(3);
    counts.delete("b");
    c.topicRemoved("b");
    expect(c.assignment("g", anyone, m.member_id).assignment).toEqual([{ topic: "a", partition: 0 }]);
  });
});

describe("bad input changes nothing", () => {
  test("unknown member, a generation never given out, other topics, a missing topic", () => {
    const { c } = coordinator({ orders: 2, other: 1 });
    const a = c.join("g", anyone, null, ["orders"]);
    const before = c.describe("g");
    expect(statusOf(() => c.join("g", anyone, "nope", ["orders"]))).toBe(404);
    expect(statusOf(() => c.assignment("g", anyone, "nope"))).toBe(404);
    expect(statusOf(() => c.leave("g", anyone, "nope"))).toBe(404);
    expect(statusOf(() => c.heartbeat("g", anyone, a.member_id, 2))).toBe(400);
    expect(statusOf(() => c.join("g", anyone, null, ["other"]))).toBe(409);
    expect(statusOf(() => c.join("g", anyone, null, ["orders", "missing"]))).toBe(404);
    expect(c.describe("g")).toEqual(before);
  });

  test("the only member may change the group's topics by joining again", () => {
    const { c } = coordinator({ orders: 2, other: 1 });
    const a = c.join("g", anyone, null, ["orders"]);
    const again = c.join("g", anyone, a.member_id, ["other"]);
    expect(again).toMatchObject({ generation: 2, assignment: [{ topic: "other", partition: 0 }] });
  });

  test("a commit naming its member is fenced by generation and assignment", () => {
    const { c } = coordinator({ orders: 2 });
    const a = c.join("g", anyone, null, ["orders"]);
    const b = c.join("g", anyone, null, ["orders"]);
    const aParts = c.assignment("g", anyone, a.member_id).assignment.map((p) => p.partition);
    expect(statusOf(() => c.checkCommitter("g", anyone, a.member_id, 1, "orders", aParts[0]!))).toBe(409);
    expect(statusOf(() => c.checkCommitter("g", anyone, a.member_id, 2, "orders", aParts[0]!))).toBe("ok");
    expect(statusOf(() => c.checkCommitter("g", anyone, b.member_id, 2, "orders", aParts[0]!))).toBe(409);
    expect(statusOf(() => c.checkCommitter("g", anyone, "gone", 2, "orders", aParts[0]!))).toBe(404);
  });
});

describe("a member is bound to the key that created it", () => {
  test("another key gets 403 on every member call; a global admin may act for it", () => {
    const { c } = coordinator({ orders: 2 });
    const a = c.join("g", alice, null, ["orders"]);
    expect(statusOf(() => c.heartbeat("g", bob, a.member_id, 1))).toBe(403);
    expect(statusOf(() => c.assignment("g", bob, a.member_id))).toBe(403);
    expect(statusOf(() => c.leave("g", bob, a.member_id))).toBe(403);
    expect(statusOf(() => c.join("g", bob, a.member_id, ["orders"]))).toBe(403);
    expect(c.heartbeat("g", admin, a.member_id, 1).status).toBe("ok");
    expect(c.heartbeat("g", alice, a.member_id, 1).status).toBe("ok");
  });
});

describe("over random sequences of joins, leaves, re-joins and timeouts", () => {
  type Step =
    | { kind: "join" }
    | { kind: "leave"; pick: number }
    | { kind: "rejoin"; pick: number }
    | { kind: "beat"; pick: number }
    | { kind: "wait"; ms: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.constant({ kind: "join" as const }),
    fc.nat().map((pick) => ({ kind: "leave" as const, pick })),
    fc.nat().map((pick) => ({ kind: "rejoin" as const, pick })),
    fc.nat().map((pick) => ({ kind: "beat" as const, pick })),
    fc.integer({ min: 0, max: 1500 }).map((ms) => ({ kind: "wait" as const, ms })),
  );

  test("every partition has one owner, shares differ by at most one, and the generation moves only with membership", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 5 }), fc.array(step, { maxLength: 40 }), (p1, p2, steps) => {
        const partitions: Record<string, number> = { t1: p1 };
        if (p2 > 0) partitions.t2 = p2;
        const topics = Object.keys(partitions);
        const total = p1 + p2;
        const { c, clock } = coordinator(partitions, 1000);
        const members: string[] = [];
        for (const s of steps) {
          const before = c.describe("g")?.generation ?? 0;
          let membershipChanged = false;
          const pick = (n: number) => members[n % members.length]!;
          if (s.kind === "join") {
            members.push(c.join("g", anyone, null, topics).member_id);
            membershipChanged = true;
          } else if (s.kind === "wait") {
            clock.advance(s.ms);
            const expired = c.expire().length > 0;
            const alive = new Set(c.describe("g")?.members ?? []);
            members.splice(0, members.length, ...members.filter((m) => alive.has(m)));
            membershipChanged = expired;
          } else if (members.length > 0) {
            const id = pick(s.pick);
            if (s.kind === "leave") {
              c.leave("g", anyone, id);
              members.splice(members.indexOf(id), 1);
              membershipChanged = true;
            } else if (s.kind === "rejoin") {
              expect(c.join("g", anyone, id, topics).member_id).toBe(id);
            } else {
              expect(c.heartbeat("g", anyone, id, before).status).toBe("ok");
            }
          }
          const after = c.describe("g")?.generation ?? 0;
          // An emptied group is forgotten; otherwise only a change of membership moves the generation.
          if (members.length === 0) expect(c.describe("g")).toBeNull();
          else expect(after).toBe(before + (membershipChanged ? 1 : 0));
          // The invariants, read through the members' own view.
          const owned = members.map((m) => c.assignment("g", anyone, m).assignment.map((p) => `${p.topic}/${p.partition}`));
          if (members.length > 0) {
            const all = owned.flat();
            expect(all.length).toBe(total);
            expect(new Set(all).size).toBe(total);
            const sizes = owned.map((o) => o.length);
            expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
