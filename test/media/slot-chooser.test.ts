// Who feeds which slot: freed at once when a user stops being heard, sticky while a user speaks,
// loudest speakers first when there are more speakers than slots, and everyone heard when there
// are enough slots.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { chooseSlots, rankUsers, type SlotChoiceInput } from "../../src/media/slots/slot-chooser.ts";

const users = ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"];

/** A chooser input whose `audible` is a Set, so the properties can list who is heard. */
type Input = SlotChoiceInput & { audible: ReadonlySet<string> };

const input: fc.Arbitrary<Input> = fc
  .record({
    slotCount: fc.integer({ min: 0, max: 5 }),
    audible: fc.subarray(users),
    speaking: fc.dictionary(fc.constantFrom(...users), fc.integer({ min: -127, max: 0 })),
    spoke: fc.dictionary(fc.constantFrom(...users), fc.integer({ min: 0, max: 100 })),
    held: fc.array(fc.option(fc.constantFrom(...users), { nil: null }), { maxLength: 5 }),
  })
  .map(({ slotCount, audible, speaking, spoke, held }) => {
    // A valid current assignment: no user twice.
    const seen = new Set<string>();
    const slots = Array.from({ length: slotCount }, (_, i) => {
      const u = held[i] ?? null;
      if (u === null || seen.has(u)) return null;
      seen.add(u);
      return u;
    });
    const priorities = { levels: new Map(Object.entries(speaking)), lastSpoke: new Map(Object.entries(spoke)) };
    return { slots, audible: new Set(audible), ranking: rankUsers(audible, priorities), ...priorities };
  });

const speaking = (i: Input, u: string | null) => u !== null && i.levels.has(u) && i.audible.has(u);

describe("chooseSlots", () => {
  test("property: every slot holds a heard user or nothing, no user twice, and the slot count never changes", () => {
    fc.assert(
      fc.property(input, (i) => {
        const out = chooseSlots(i);
        expect(out.length).toBe(i.slots.length);
        const held = out.filter((u): u is string => u !== null);
        expect(new Set(held).size).toBe(held.length);
        for (const u of held) expect(i.audible.has(u)).toBe(true);
      }),
    );
  });

  test("property: stickiness — a heard user who is speaking keeps its slot, whoever else is louder", () => {
    fc.assert(
      fc.property(input, (i) => {
        const out = chooseSlots(i);
        i.slots.forEach((u, k) => {
          if (speaking(i, u)) expect(out[k]).toBe(u);
        });
      }),
    );
  });

  test("property: a heard holder loses its slot only to a speaker, and only when silent itself", () => {
    fc.assert(
      fc.property(input, (i) => {
        const out = chooseSlots(i);
        i.slots.forEach((u, k) => {
          if (u === null || !i.audible.has(u) || out[k] === u) return;
          expect(i.levels.has(u)).toBe(false);
          expect(i.levels.has(out[k]!)).toBe(true);
        });
      }),
    );
  });

  test("property: with at least as many slots as heard users, everyone heard has a slot", () => {
    fc.assert(
      fc.property(input, (i) => {
        fc.pre(i.audible.size <= i.slots.length);
        const out = chooseSlots(i);
        for (const u of i.audible) expect(out).toContain(u);
      }),
    );
  });

  test("property: no unplaced speaker is louder than a placed one who could have been displaced; choosing again changes nothing", () => {
    fc.assert(
      fc.property(input, (i) => {
        const out = chooseSlots(i);
        const unplacedSpeakers = [...i.audible].filter((u) => i.levels.has(u) && !out.includes(u));
        // A speaker left out means every slot is held by a speaker (who is sticky).
        if (unplacedSpeakers.length > 0) for (const u of out) expect(u !== null && i.levels.has(u)).toBe(true);
        expect(chooseSlots({ ...i, slots: out })).toEqual(out);
      }),
    );
  });

  test("property: a ranking of every user, heard or not, chooses exactly what a ranking of the heard ones chooses", () => {
    fc.assert(
      fc.property(input, (i) => {
        expect(chooseSlots({ ...i, ranking: rankUsers(users, i) })).toEqual(chooseSlots(i));
      }),
    );
  });

  test("more speakers than slots: the loudest take the slots of silent users; the quietest speaker waits", () => {
    const priorities = {
      levels: new Map([
        ["talker", -60],
        ["loud", -20],
        ["soft", -50],
      ]),
      lastSpoke: new Map([["quiet", 5]]),
    };
    const audible = new Set(["quiet", "talker", "loud", "soft"]);
    const ranking = rankUsers(audible, priorities);
    expect(ranking).toEqual(["loud", "soft", "talker", "quiet"]);
    expect(chooseSlots({ slots: ["quiet", "talker"], audible, ranking, ...priorities })).toEqual(["loud", "talker"]);
  });

  test("a user who leaves the heard set frees its slot at once, and the slot goes to someone heard", () => {
    const quiet = { levels: new Map(), lastSpoke: new Map() };
    const out = chooseSlots({ slots: ["a", "b"], audible: new Set(["b", "c"]), ranking: ["a", "b", "c"], ...quiet });
    expect(out).toEqual(["c", "b"]);
    expect(chooseSlots({ slots: ["a", "b"], audible: new Set(["b"]), ranking: ["a", "b", "c"], ...quiet })).toEqual([null, "b"]);
  });
});
