// Streams in RDB format, in process (the side-by-side DUMP/RESTORE with redis-server is in
// stream-differential.test.ts): the listpack writer and reader agree on any elements, at every
// encoding's bounds; any stream — nodes with deleted slots, mixed field names, IDs past 2^53,
// groups with pending entries and idle consumers — comes back from writeValue/readValue the same;
// and any damage to a stream's bytes reads as a stream or as null, never as a crash.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ListpackWriter } from "../../../src/kv/rdb/listpack-writer.ts";
import { listpackEntries } from "../../../src/kv/rdb/packed-lists.ts";
import { readValue } from "../../../src/kv/rdb/value-reader.ts";
import { writeValue } from "../../../src/kv/rdb/value-writer.ts";
import { ConsumerGroup } from "../../../src/kv/types/stream/consumer-group.ts";
import { Stream } from "../../../src/kv/types/stream/stream.ts";
import { makeId, streamIdMax, streamIdMin } from "../../../src/kv/types/stream/stream-id.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 300);
const byte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
/** Sizes where a listpack string's or an element's backwards length changes form. */
const boundarySizes = [0, 1, 63, 64, 126, 127, 128, 4095, 4096, 16_381, 16_382, 16_383, 16_384];

const element = fc.oneof(
  fc.string({ unit: byte, maxLength: 30 }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  fc.constantFrom(
    "0",
    "-0",
    "01",
    "+5",
    "-1",
    "127",
    "128",
    "-4096",
    "-4097",
    "4095",
    "4096",
    "32767",
    "32768",
    "8388607",
    "8388608",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
  ),
  fc.constantFrom(...boundarySizes).map((n) => "v".repeat(n)),
);

describe("listpacks", () => {
  test("what ListpackWriter writes, listpackEntries reads back, integers as their canonical text", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 40 }), (items) => {
        const lp = new ListpackWriter();
        for (const item of items) lp.string(item);
        expect(listpackEntries(lp.finish())).toEqual(items);
      }),
      { numRuns: runs },
    );
  });
});

// ---- streams ------------------------------------------------------------------------------------

const fieldName = fc.constantFrom("type", "user", "f", "", "x".repeat(70));
const fieldsOf = fc.array(fc.tuple(fieldName, element), { minLength: 1, maxLength: 4 }).map((pairs) => pairs.flat());

/** A stream built through its own API: entries (shared or mixed names), deletions, groups, pending entries. */
const streamArb = fc
  .record({
    start: fc.oneof(fc.constant(1n), fc.bigInt({ min: 0n, max: 2n ** 64n - 200n })),
    steps: fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 3n }), fc.bigInt({ min: 0n, max: 2n ** 60n }), fc.boolean()), { minLength: 0, maxLength: 300 }),
    shared: fieldsOf,
    odd: fieldsOf,
    deletions: fc.array(fc.nat(), { maxLength: 40 }),
    nodeSize: fc.constantFrom(1, 3, 100),
    groups: fc.array(
      fc.tuple(
        fc.constantFrom("g1", "g2", ""),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom("alice", "bob", "")), { maxLength: 20 }),
        fc.option(fc.bigInt({ min: 0n, max: 1000n })),
      ),
      { maxLength: 3 },
    ),
    idle: fc.array(fc.constantFrom("carol", "dave"), { maxLength: 2 }),
  })
  .map(({ start, steps, shared, odd, deletions, nodeSize, groups, idle }) => {
    const stream = new Stream();
    let ms = start;
    let seq = 0n;
    for (const [msStep, seqValue, useOdd] of steps) {
      ms += msStep;
      seq = msStep === 0n ? seq + 1n : seqValue;
      if (ms >= 2n ** 64n || seq >= 2n ** 64n) break;
      const id = makeId(ms, seq);
      if (id <= stream.lastId) continue;
      stream.append(id, useOdd ? odd : shared, nodeSize);
    }
    const ids = [...stream.range(streamIdMin, streamIdMax)].map((entry) => entry.id);
    for (const i of deletions)
      if (ids.length > 0 && stream.delete(ids[i % ids.length]!))
        stream.maxDeletedId = ids[i % ids.length]! > stream.maxDeletedId ? ids[i % ids.length]! : stream.maxDeletedId;
    const live = [...stream.range(streamIdMin, streamIdMax)].map((entry) => entry.id);
    for (const [name, deliveries, read] of groups) {
      if (stream.groups.has(name)) continue;
      const group = new ConsumerGroup(live.at(-1) ?? streamIdMin, read);
      stream.groups.set(name, group);
      for (const [i, owner] of deliveries) {
        if (live.length === 0) break;
        const { consumer } = group.consumer(owner, 1_700_000_000_000 + i);
        group.deliver(live[i % live.length]!, consumer, 1_700_000_000_000 + i).deliveries = BigInt(i % 5);
      }
      for (const name of idle) group.consumer(name, 1_700_000_000_123);
    }
    return stream;
  });

/** Everything a stream holds, as plain data to compare. */
function picture(stream: Stream): unknown {
  return {
    nodes: stream.nodesView(),
    length: stream.length,
    lastId: stream.lastId,
    maxDeletedId: stream.maxDeletedId,
    entriesAdded: stream.entriesAdded,
    groups: [...stream.groups].map(([name, group]) => ({
      name,
      lastId: group.lastId,
      entriesRead: group.entriesRead,
      pending: [...group.pendingRange(streamIdMin, streamIdMax)].map((p) => [p.id, p.consumer.name, p.deliveredMs, p.deliveries]),
      consumers: [...group.consumers.values()].map((c) => [c.name, c.seenMs, [...c.pending].sort()]).sort(),
    })),
  };
}

describe("streams in RDB format", () => {
  test("any stream comes back from writeValue and readValue the same: nodes, slots, IDs, counters, groups", () => {
    fc.assert(
      fc.property(streamArb, (stream) => {
        const read = readValue(writeValue(stream)!);
        expect(read).toBeInstanceOf(Stream);
        expect(picture(read as Stream)).toEqual(picture(stream));
      }),
      { numRuns: runs },
    );
  });

  test("damaged bytes read as a stream or as null, never as a crash", () => {
    const damage = fc.oneof(
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, b]) => (bytes: Uint8Array) => {
        const out = bytes.slice();
        out[at % out.length] = b;
        return out;
      }),
      fc.nat().map((at) => (bytes: Uint8Array) => bytes.subarray(0, at % bytes.length)),
      fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([at, extra]) => (bytes: Uint8Array) => {
        const cut = at % bytes.length;
        return Uint8Array.from([...bytes.subarray(0, cut), ...extra, ...bytes.subarray(cut)]);
      }),
    );
    fc.assert(
      fc.property(streamArb, fc.array(damage, { minLength: 1, maxLength: 3 }), (stream, damages) => {
        // The type byte stays: another type's reader is not what is under test.
        const written = writeValue(stream)!;
        let body = written.subarray(1);
        for (const d of damages) body = body.length === 0 ? body : d(body);
        const read = readValue(Uint8Array.from([written[0]!, ...body]));
        expect(read === null || read instanceof Stream).toBe(true);
      }),
      { numRuns: runs },
    );
  });
});
