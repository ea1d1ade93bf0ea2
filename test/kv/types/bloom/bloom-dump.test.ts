// BF.SCANDUMP and BF.LOADCHUNK through real `svc kv` processes: RedisBloom's documented dump
// reproduced byte for byte, dumps that load into another key and another server as the same
// filter (BF.INFO, BF.DEBUG, BF.MEXISTS over items added and not), RedisBloom's errors — each
// refused request followed by a look proving it changed nothing — and, with fast-check, random
// bytes that never hurt the server and random chains whose dump round-trips exactly.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { BloomChain } from "../../../../src/kv/types/bloom/chain.ts";
import { chunkAt, decodeHeader, dumpChunkBytesMax, encodeHeader, headerIterator, loadChunk } from "../../../../src/kv/types/bloom/bloom-dump.ts";
import { RespClient, type RespValue } from "../../support/resp-client.ts";
import { type ServerProcess, startKv } from "../../support/servers.ts";

let kv: ServerProcess;
let other: ServerProcess;
let client: RespClient;
let otherClient: RespClient;

beforeAll(async () => {
  [kv, other] = await Promise.all([startKv(), startKv()]);
  [client, otherClient] = await Promise.all([RespClient.connect(kv.port), RespClient.connect(other.port)]);
});

afterAll(async () => {
  client.close();
  otherClient.close();
  await Promise.all([kv.stop(), other.stop()]);
});

beforeEach(async () => {
  await Promise.all([client.call("FLUSHALL"), otherClient.call("FLUSHALL")]);
});

const call = (...argv: (string | number)[]): Promise<RespValue> => client.call(...argv.map(String));
const e = (message: string) => ({ e: message });
const ok = { s: "OK" };
const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");

/** Every [iterator, data] pair BF.SCANDUMP gives for `key`, header first, up to the final [0, ""]. */
async function scanDump(c: RespClient, key: string): Promise<[string, string][]> {
  const chunks: [string, string][] = [];
  for (let iterator = "0"; ; ) {
    const [next, data] = (await c.call("BF.SCANDUMP", key, iterator)) as [bigint, string];
    if (next === 0n) {
      expect(data).toBe("");
      return chunks;
    }
    chunks.push([String(next), data]);
    iterator = String(next);
  }
}

async function loadChunks(c: RespClient, key: string, chunks: readonly [string, string][]): Promise<void> {
  for (const [iterator, data] of chunks) expect(await c.call("BF.LOADCHUNK", key, iterator, data)).toEqual(ok);
}

/** What two copies of a filter must agree on: BF.INFO, BF.DEBUG and membership of `items`. */
async function describeFilter(c: RespClient, key: string, items: readonly string[]): Promise<RespValue[]> {
  return [await c.call("BF.INFO", key), await c.call("BF.DEBUG", key), await c.call("BF.MEXISTS", key, ...items)];
}

async function expectCopies(source: string, items: readonly string[]): Promise<[string, string][]> {
  const chunks = await scanDump(client, source);
  await loadChunks(client, "copy", chunks);
  await loadChunks(otherClient, "copy", chunks);
  const expected = await describeFilter(client, source, items);
  expect(await describeFilter(client, "copy", items)).toEqual(expected);
  expect(await describeFilter(otherClient, "copy", items)).toEqual(expected);
  // The copy dumps to the same bytes, so a second generation is the same filter too.
  expect(await scanDump(otherClient, "copy")).toEqual(chunks);
  return chunks;
}

describe("the dump format", () => {
  test("reproduces RedisBloom's documented BF.SCANDUMP example byte for byte, and loads it back", async () => {
    expect(await call("BF.RESERVE", "bf", "0.1", "10")).toEqual(ok);
    expect(await call("BF.ADD", "bf", "item1")).toBe(1n);
    const header = (await call("BF.SCANDUMP", "bf", "0")) as [bigint, string];
    expect(header[0]).toBe(1n);
    // From docs/commands/bf.scandump.md: items 1, one sub-filter, options 5, expansion 2; then
    // 8 bytes, 64 bits, 1 item, error 0.05, 6.235… bits per item, 5 hashes, capacity 10, n2 0.
    expect(hex(header[1])).toBe(
      "0100000000000000" +
        "01000000" +
        "05000000" +
        "02000000" +
        "0800000000000000" +
        "4000000000000000" +
        "0100000000000000" +
        "9a9999999999a93f" +
        "4af7d49edef01840" +
        "05000000" +
        "0a00000000000000" +
        "00",
    );
    expect(await call("BF.SCANDUMP", "bf", "1")).toEqual([9n, "\x01\b\x00\x80\x00\x04 \x00"]);
    expect(await call("BF.SCANDUMP", "bf", "9")).toEqual([0n, ""]);
    expect(await call("DEL", "bf")).toBe(1n);
    expect(await call("BF.LOADCHUNK", "bf", "1", header[1])).toEqual(ok);
    expect(await call("BF.LOADCHUNK", "bf", "9", "\x01\b\x00\x80\x00\x04 \x00")).toEqual(ok);
    expect(await call("BF.MEXISTS", "bf", "item1", "item2")).toEqual([1n, 0n]);
  });

  test("a scaling chain of six sub-filters with expansion 3 loads as the same filter, here and on another server", async () => {
    expect(await call("BF.RESERVE", "src", "0.01", "20", "EXPANSION", "3")).toEqual(ok);
    await call("BF.MADD", "src", ...range(5000, "a"));
    expect(await call("BF.INFO", "src", "FILTERS")).toEqual([6n]);
    const chunks = await expectCopies("src", [...range(5000, "a"), ...range(5000, "n")]);
    // One chunk per sub-filter after the header: a chunk never spans two.
    expect(chunks).toHaveLength(7);
  });

  test("a NONSCALING filter stays nonscaling: it is full at the same item, with no expansion", async () => {
    expect(await call("BF.RESERVE", "src", "0.001", "300", "NONSCALING")).toEqual(ok);
    await call("BF.MADD", "src", ...range(300, "a"));
    await expectCopies("src", [...range(300, "a"), ...range(3000, "n")]);
    expect(await call("BF.INFO", "copy", "EXPANSION")).toEqual([null]);
    const more = range(50, "more").map((item) => ["BF.ADD", "src", item]);
    const [src, copy] = await Promise.all([client.pipeline(more), client.pipeline(more.map(([c, , i]) => [c!, "copy", i!]))]);
    expect(copy).toEqual(src);
    expect(copy).toContainEqual(e("ERR non scaling filter is full"));
  });

  test("a filter of 40 MB comes in 16 MiB chunks, each with its iterator, and loads exactly", async () => {
    expect(await call("BF.RESERVE", "src", "0.01", "33000000", "NONSCALING")).toEqual(ok);
    await call("BF.MADD", "src", ...range(20_000, "a"));
    const chunks = await expectCopies("src", [...range(20_000, "a"), ...range(20_000, "n")]);
    const bytes = Number(((await call("BF.DEBUG", "src")) as string[])[1]!.match(/bytes:(\d+)/)![1]);
    expect(chunks.map(([, data]) => data.length)).toEqual([73, dumpChunkBytesMax, dumpChunkBytesMax, bytes - 2 * dumpChunkBytesMax]);
    expect(chunks.map(([iterator]) => Number(iterator))).toEqual([1, 1 + dumpChunkBytesMax, 1 + 2 * dumpChunkBytesMax, 1 + bytes]);
  });

  test('SCANDUMP in the middle of a sub-filter answers from there; past the end or below 1, [0, ""]', async () => {
    await call("BF.RESERVE", "src", "0.01", "10");
    await call("BF.MADD", "src", ...range(15, "a"));
    const [, first] = (await call("BF.SCANDUMP", "src", "1")) as [bigint, string];
    expect(await call("BF.SCANDUMP", "src", "5")).toEqual([BigInt(1 + first.length), first.slice(4)]);
    for (const iterator of ["-1", "-9223372036854775808", "100000", "9223372036854775807"]) {
      expect(await call("BF.SCANDUMP", "src", iterator)).toEqual([0n, ""]);
    }
  });

  test("LOADCHUNK accepts a chunk split anywhere inside a sub-filter, as RedisBloom does", async () => {
    await call("BF.RESERVE", "src", "0.01", "1000");
    await call("BF.MADD", "src", ...range(150, "a"));
    const [[, header], [iterator, data]] = (await scanDump(client, "src")) as [[string, string], [string, string]];
    await call("BF.LOADCHUNK", "copy", "1", header!);
    const end = Number(iterator);
    expect(await call("BF.LOADCHUNK", "copy", String(end - 10), data!.slice(0, -10))).toEqual(ok);
    expect(await call("BF.LOADCHUNK", "copy", String(end), data!.slice(-10))).toEqual(ok);
    // An empty chunk is fine where a byte is, and has no byte to point at just past the end.
    expect(await call("BF.LOADCHUNK", "copy", String(end - 5), "")).toEqual(ok);
    expect(await call("BF.LOADCHUNK", "copy", String(end), "")).toEqual(e("ERR invalid offset - no link found"));
    const items = [...range(150, "a"), ...range(150, "n")];
    expect(await describeFilter(client, "copy", items)).toEqual(await describeFilter(client, "src", items));
  });
});

describe("refusals, each of which changes nothing", () => {
  const arity = (name: string) => e(`ERR wrong number of arguments for '${name}' command`);

  test("arity, a missing key, another type, an iterator that is not an integer", async () => {
    await call("SET", "str", "x");
    expect(await call("BF.SCANDUMP", "k")).toEqual(arity("bf.scandump"));
    expect(await call("BF.SCANDUMP", "k", "0", "1")).toEqual(arity("bf.scandump"));
    expect(await call("BF.LOADCHUNK", "k", "1")).toEqual(arity("bf.loadchunk"));
    expect(await call("BF.SCANDUMP", "k", "0")).toEqual(e("ERR not found"));
    // SCANDUMP looks at the key before the iterator; LOADCHUNK reads the iterator first.
    expect(await call("BF.SCANDUMP", "k", "x")).toEqual(e("ERR not found"));
    expect(await call("BF.SCANDUMP", "str", "0")).toEqual(e("WRONGTYPE Operation against a key holding the wrong kind of value"));
    await call("BF.ADD", "bf", "a");
    expect(await call("BF.SCANDUMP", "bf", "1.5")).toEqual(e("Second argument must be numeric"));
    expect(await call("BF.LOADCHUNK", "k", "x", "data")).toEqual(e("ERR Second argument must be numeric"));
    expect(await call("BF.LOADCHUNK", "str", "1", "data")).toEqual(e("WRONGTYPE Operation against a key holding the wrong kind of value"));
    expect(await call("BF.LOADCHUNK", "k", "9", "data")).toEqual(e("ERR not found"));
    expect(await call("EXISTS", "k")).toBe(0n);
    expect(await call("GET", "str")).toBe("x");
  });

  test("bad headers: short, wrong length, no sub-filters, inconsistent fields, unknown options", async () => {
    await call("BF.RESERVE", "src", "0.01", "100");
    await call("BF.ADD", "src", "a");
    const [, header] = (await scanDump(client, "src"))[0]!;
    const bytes = Buffer.from(header!, "latin1");
    const changed = (at: number, write: (b: Buffer) => void) => {
      const copy = Buffer.from(bytes);
      write(copy.subarray(at));
      return copy.toString("latin1");
    };
    const bad = [
      "",
      "short",
      header!.slice(0, -1),
      `${header!}\0`,
      changed(8, (b) => b.writeUInt32LE(0)), // no sub-filters
      changed(8, (b) => b.writeUInt32LE(2)), // two announced, one there
      changed(0, (b) => b.writeBigUInt64LE(2n)), // items ≠ the sub-filter's items
      changed(12, (b) => b.writeUInt32LE(5 | 16)), // an option RedisBloom does not know
      changed(12, (b) => b.writeUInt32LE(1)), // 32-bit hashes: not something we can answer
      changed(20 + 8, (b) => b.writeBigUInt64LE(8n)), // bits ≠ bytes · 8
      changed(20, (b) => b.writeBigUInt64LE(0n)), // no bytes
      changed(20 + 24, (b) => b.writeDoubleLE(1)), // error rate 1
      changed(20 + 24, (b) => b.writeDoubleLE(Number.NaN)),
      changed(20 + 40, (b) => b.writeUInt32LE(99)), // hashes ≠ ⌈ln 2 · bits per item⌉
      changed(20 + 52, (b) => b.writeUInt8(3)), // a rounded filter (n2)
    ];
    for (const data of bad) {
      expect(await call("BF.LOADCHUNK", "k", "1", data)).toEqual(e("ERR received bad data"));
      expect(await call("EXISTS", "k")).toBe(0n);
    }
    expect(await call("BF.LOADCHUNK", "k", "1", header!)).toEqual(ok);
  });

  test("a header onto an existing filter is taken for a chunk and refused; so are chunks that do not fit", async () => {
    await call("BF.MADD", "src", ...range(150, "a"));
    const chunks = await scanDump(client, "src");
    const [[, header], [end, bits]] = chunks as [[string, string], [string, string]];
    const before = await scanDump(client, "src");
    const total = 1 + bits!.length + chunks[2]![1].length;
    const refusals: [string, string, RespValue][] = [
      ["1", header!, e("ERR received bad data")], // iterator below the data's length
      ["0", "", e("ERR received bad data")],
      ["-5", "", e("ERR received bad data")],
      ["1", "x", e("ERR invalid offset - no link found")], // it would start before the bits
      [String(total + 1), "x", e("ERR invalid offset - no link found")], // after them
      [String(Number(end) + 1), bits!.slice(0, 2), e("ERR invalid chunk - Too big for current filter")], // across two sub-filters
    ];
    for (const [iterator, data, error] of refusals) {
      expect(await call("BF.LOADCHUNK", "src", iterator, data)).toEqual(error);
      expect(await scanDump(client, "src")).toEqual(before);
    }
  });
});

describe("fast-check", () => {
  test("arbitrary bytes to LOADCHUNK, as a header or as a chunk, never hurt the server", async () => {
    await call("BF.MADD", "bf", ...range(150, "a"));
    const before = await scanDump(client, "bf");
    const [, header] = before[0]!;
    const headerBytes = [...Buffer.from(header!, "latin1")];
    // Mostly the real header with a few bytes changed, so that the checks past the length are reached.
    const mutated = fc.array(fc.tuple(fc.nat(headerBytes.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }).map((edits) => {
      const bytes = headerBytes.slice();
      for (const [at, value] of edits) bytes[at] = value;
      return Buffer.from(bytes).toString("latin1");
    });
    const data = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString("latin1")),
      mutated,
    );
    const iterator = fc.oneof(fc.integer({ min: -3, max: 400 }).map(String), fc.constantFrom("1", "0", "x", "9223372036854775807", "-9223372036854775808"));
    await fc.assert(
      fc.asyncProperty(iterator, data, async (it, bytes) => {
        await call("DEL", "new");
        const reply = await call("BF.LOADCHUNK", "new", it, bytes);
        if (!("e" in (reply as object))) {
          // A header that passed the checks makes a usable filter.
          expect(reply).toEqual(ok);
          expect((await call("BF.MADD", "new", "x", "y")) as unknown[]).toHaveLength(2);
          await scanDump(client, "new");
        }
        const onExisting = await call("BF.LOADCHUNK", "bf", it, bytes);
        if ("e" in (onExisting as object)) expect(await scanDump(client, "bf")).toEqual(before);
        else await loadChunks(client, "bf", before.slice(1)); // put the bits back
      }),
      { numRuns: 300 },
    );
    expect(await call("PING")).toEqual({ s: "PONG" });
  });

  test("encoding a random chain and decoding it gives the same chain, bit for bit", () => {
    const chainArb = fc.record({
      capacity: fc.integer({ min: 1, max: 300 }),
      errorRate: fc.double({ min: 1e-9, max: 0.5, noNaN: true }),
      expansion: fc.integer({ min: 1, max: 4 }),
      scaling: fc.boolean(),
      items: fc.array(
        fc.nat(5000).map((n) => `i${n}`),
        { maxLength: 800 },
      ),
    });
    fc.assert(
      fc.property(chainArb, ({ capacity, errorRate, expansion, scaling, items }) => {
        const chain = BloomChain.create(BigInt(capacity), errorRate, expansion, scaling)!;
        chain.addAll(items);
        const copy = decodeHeader(encodeHeader(chain));
        for (let chunk = chunkAt(chain, headerIterator); chunk.next !== 0n; chunk = chunkAt(chain, chunk.next)) {
          loadChunk(copy, chunk.next, chunk.data);
        }
        expect(copy.size).toBe(chain.size);
        expect(copy.expansion).toBe(chain.expansion);
        expect(copy.scaling).toBe(chain.scaling);
        expect(copy.filters.map((f) => ({ sizing: f.sizing, size: f.size, bits: [...f.bits] }))).toEqual(
          chain.filters.map((f) => ({ sizing: f.sizing, size: f.size, bits: [...f.bits] })),
        );
        const probe = [...items, "p1", "p2", "p3"];
        expect(copy.hasAll(probe)).toEqual(chain.hasAll(probe));
        expect(copy.addAll(["after"])).toEqual(chain.addAll(["after"]));
      }),
      { numRuns: 200 },
    );
  });
});
