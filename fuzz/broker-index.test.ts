// Sparse index lookups (src/broker/log/offset-index.ts, time-index.ts, and a segment's read and
// time search built on them) agree with a linear scan, for random indexes and random segments —
// before and after the index files are written and loaded back.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OffsetIndex } from "../src/broker/log/offset-index.ts";
import { Partition } from "../src/broker/log/partition.ts";
import { decodeRecords, type LogRecord } from "../src/broker/log/record.ts";
import { TimeIndex } from "../src/broker/log/time-index.ts";
import type { Clock } from "../src/core/clock.ts";

const root = mkdtempSync(join(tmpdir(), "svc-broker-index-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

const increasing = (steps: number[], start: number) => {
  const out: number[] = [];
  for (const s of steps) out.push((out.at(-1) ?? start) + 1 + s);
  return out;
};

describe("OffsetIndex", () => {
  test("lookup is the last entry at or below the target (or the segment start), as a linear scan finds", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(50), { maxLength: 60 }),
        fc.array(fc.nat(300), { maxLength: 60 }),
        fc.nat(1e6),
        fc.nat(4000),
        (offSteps, posSteps, base, target) => {
          const n = Math.min(offSteps.length, posSteps.length);
          const offsets = increasing(offSteps.slice(0, n), base);
          const positions = increasing(posSteps.slice(0, n), 0);
          const index = new OffsetIndex(base);
          offsets.forEach((o, i) => index.append(o, positions[i]!));
          const reference = (t: number) => {
            let best = { offset: base, position: 0 };
            offsets.forEach((o, i) => o <= t && (best = { offset: o, position: positions[i]! }));
            return best;
          };
          for (const t of [base + target, base - 1, offsets[0] ?? base, (offsets.at(-1) ?? base) + 1]) {
            expect(index.lookup(t)).toEqual(reference(t));
          }
          const decoded = OffsetIndex.decode(index.encode(), base, (positions.at(-1) ?? 0) + 1)!;
          expect(decoded.lookup(base + target)).toEqual(reference(base + target));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("TimeIndex", () => {
  test("lookup is the offset of the last entry below the target time (or the base), as a linear scan finds", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(100), fc.nat(20)), { maxLength: 60 }), fc.integer({ min: -50, max: 3000 }), (steps, target) => {
        const base = 1000;
        const index = new TimeIndex(base);
        const entries: { t: number; o: number }[] = [];
        let t = 0;
        let o = base;
        for (const [dt, doff] of steps) {
          t += dt;
          o += 1 + doff;
          index.maybeAppend(t, o);
          if (entries.length === 0 || t > entries.at(-1)!.t) entries.push({ t, o });
        }
        let expected = base;
        for (const e of entries) if (e.t < target) expected = e.o;
        expect(index.lookup(target)).toBe(expected);
        expect(TimeIndex.decode(index.encode(), base)!.lookup(target)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

/** A clock that returns a scripted sequence of times, stepping back as well as forward. */
function scriptedClock(times: number[]): Clock {
  let i = 0;
  return { nowMs: () => times[i++ % times.length]!, monotonicMs: () => i };
}

function linearRecords(dir: string): LogRecord[] {
  const logs = readdirSync(dir)
    .filter((n) => n.endsWith(".log"))
    .sort();
  return logs.flatMap((name) => decodeRecords(readFileSync(join(dir, name))).records);
}

describe("segment lookups", () => {
  test("reading one record from any offset, and finding the first record at a time, equal a linear scan", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat(300)), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 16, max: 1024 }),
        fc.array(fc.integer({ min: -10, max: 5100 }), { minLength: 1, maxLength: 10 }),
        async (produces, times, indexIntervalBytes, targets) => {
          const dir = join(root, `s${++dirs}`);
          const options = { indexIntervalBytes, segmentBytes: 2048, clock: scriptedClock(times) };
          const partition = Partition.open(dir, options);
          for (const [count, size] of produces) {
            await partition.append(Array.from({ length: count }, () => ({ key: null, value: new Uint8Array(size) })));
          }
          await partition.close();
          const all = linearRecords(dir);
          const reopened = Partition.open(dir, options);
          for (const raw of targets) {
            const offset = raw % (all.length + 1);
            const got = reopened.read(offset, 1, 1).records.map((r) => r.offset);
            expect(got).toEqual(
              all
                .filter((r) => r.offset >= offset)
                .slice(0, 1)
                .map((r) => r.offset),
            );
            const atTime = all.find((r) => r.timestampMs >= raw)?.offset ?? null;
            expect(reopened.offsetForTimestamp(raw)).toBe(atTime);
          }
          await reopened.close();
        },
      ),
      { numRuns: 60 },
    );
  });
});
