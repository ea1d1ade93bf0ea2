// A stream node's IDs (src/kv/types/stream/node-ids.ts) in each of their forms — 32-bit offsets
// from the node's first ms, doubles, bigints — against a plain list of bigint IDs: any ascending
// run of IDs, pushed as numbers or as bigints, reads back the same, compares the same with any ID,
// and survives compact() and copy(), whichever forms it passed through on the way.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { NodeIds } from "../../../../src/kv/types/stream/node-ids.ts";
import { formatId, idBound, makeId, msOf, numberHalfMax, seqOf, type StreamId } from "../../../../src/kv/types/stream/stream-id.ts";

const u64Max = 2n ** 64n - 1n;

/** A step to the next ID: small (the usual), past the narrow form's 2^32, or toward the 64-bit limits. */
const step = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.bigInt({ min: 0n, max: 5n }), fc.bigInt({ min: 0n, max: 3n })) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(0n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 40n), fc.constantFrom(0n, 1n, 2n ** 32n, 2n ** 52n)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(0n, 2n ** 53n, 2n ** 62n), fc.constantFrom(0n, 2n ** 53n, u64Max - 1n)) },
);

/** Ascending IDs from `start`, each step adding to the ms (then any seq) or, with no ms step, to the seq. */
function ascending(start: bigint, steps: readonly (readonly [bigint, bigint])[]): StreamId[] {
  const ids: StreamId[] = [];
  let ms = start;
  let seq = 0n;
  for (const [msStep, seqStep] of steps) {
    if (msStep > 0n) {
      ms += msStep;
      seq = seqStep;
    } else seq += seqStep + 1n;
    if (ms > u64Max || seq > u64Max) break;
    ids.push(makeId(ms, seq));
  }
  return ids;
}

function check(ids: NodeIds, expected: readonly StreamId[], probes: readonly StreamId[]): void {
  expect(ids.count).toBe(expected.length);
  for (let slot = 0; slot < expected.length; slot++) {
    expect(ids.idAt(slot)).toBe(expected[slot]!);
    expect(ids.textAt(slot)).toBe(formatId(expected[slot]!));
    for (const probe of probes) {
      const want = expected[slot]! < probe ? -1 : expected[slot]! === probe ? 0 : 1;
      expect(Math.sign(ids.compare(slot, probe, idBound(probe)))).toBe(want);
    }
  }
}

test("any ascending IDs read back and compare as bigints do, in every form, after compact and copy", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 2n ** 50n }),
      fc.array(step, { minLength: 1, maxLength: 40 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 3 }),
      (start, steps, asBigints, picks) => {
        const expected = ascending(start, steps);
        const ids = new NodeIds(2);
        for (const id of expected) {
          const small = msOf(id) < numberHalfMax && seqOf(id) < numberHalfMax;
          if (small && !asBigints) ids.pushNumbers(Number(msOf(id)), Number(seqOf(id)));
          else ids.push(id);
        }
        // Probes: IDs of the node, and just around them.
        const probes = picks.flatMap((p) => {
          const id = expected[p % Math.max(1, expected.length)];
          return id === undefined ? [] : [id, id === 0n ? 0n : id - 1n, id + 1n];
        });
        check(ids, expected, probes);
        const copied = ids.copy();
        ids.compact();
        check(ids, expected, probes);
        check(copied, expected, probes);
      },
    ),
    { numRuns: 500 },
  );
});
