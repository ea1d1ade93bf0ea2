// The SV01 binary protocol against a real `svc broker --bind-binary` (spec: Binary protocol;
// Authentication 4; Limits): every handshake status, tokens of 1024 and 1025 bytes, records
// crossing between binary and HTTP, the same grants and quotas, 64 requests pipelined in one
// write (32 run, the rest wait their turn) with produces to one topic in order, error frames, a
// client that stops reading, the idle timeout, the per-address limit, revocation mid-connection,
// a gzip bomb, and TLS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressSync as lz4Compress } from "lz4-napi";
import { gzipSync } from "node:zlib";
import { BinaryClient, BinaryError, recordText } from "../../src/broker/binary/client.ts";
import { type Codec, inflate } from "../../src/broker/binary/compression.ts";
import { encodeConsumeRequest, encodeProduceRequest } from "../../src/broker/binary/payloads.ts";
import { encodeClientHandshake, encodeFrame, features, opcodes } from "../../src/broker/binary/wire.ts";
import { makeCertificate } from "../support/certificate.ts";
import { type BinaryBrokerProcess, freshDataDir, startBinaryBroker } from "./support/broker.ts";

let broker: BinaryBrokerProcess;
let admin: string;
let writer: { secret: string; id: string };
let reader: string;

const connect = (token?: string, compression?: Codec) => BinaryClient.connect({ host: broker.binaryHost, port: broker.binaryPort, token, compression });
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function refusal(promise: Promise<unknown>): Promise<BinaryError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BinaryError);
    return error as BinaryError;
  }
  throw new Error("not refused");
}

/** The raw answer to raw bytes sent on a fresh TCP connection: what the broker says to a client that is not ours. */
function rawExchange(bytes: Uint8Array, port = broker.binaryPort): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = netConnect(port, "127.0.0.1", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    socket.on("error", reject);
    setTimeout(() => socket.destroy(), 3000);
  });
}

beforeAll(async () => {
  broker = await startBinaryBroker(freshDataDir(), ["--auth", "required", "--max-request-body-bytes", "1MiB"]);
  admin = readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim();
  for (const name of ["orders", "other"]) expect((await broker.send("POST", "/topics", { name, partitions: 2 }, bearer(admin))).status).toBe(201);
  const made = async (body: object) => (await broker.send("POST", "/admin/keys", body, bearer(admin))).body;
  const w = await made({ name: "writer", acls: [{ action: "write", topic_prefix: "orders" }] });
  writer = { secret: w.secret, id: w.key_id };
  reader = (await made({ name: "reader", acls: [{ action: "read", topic_prefix: "orders" }], consume_bytes_per_sec: 100 })).secret;
});
afterAll(() => broker.stop());

describe("the handshake", () => {
  test("ok, and each refusal with its status", async () => {
    const ok = await connect(writer.secret);
    expect(await ok.ping(new Uint8Array([1, 2]))).toEqual(new Uint8Array([1, 2]));
    ok.close();
    expect((await refusal(connect())).status).toBe(3);
    expect((await refusal(connect("svck_nobody"))).status).toBe(2);
    const badMagic = await rawExchange(new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"));
    expect([...badMagic.subarray(0, 5)]).toEqual([0x53, 0x56, 0x30, 0x31, 1]);
    expect(badMagic.subarray(13).toString()).toContain("bad magic");
  });

  test("a token of 1024 bytes is read (and judged), one of 1025 refused", async () => {
    const exactly = await refusal(connect("x".repeat(1024)));
    expect([exactly.status, exactly.message]).toEqual([2, "handshake refused (status 2): unknown API key"]);
    const over = await refusal(connect("x".repeat(1025)));
    expect(over.status).toBe(2);
    expect(over.message).toContain("1025 bytes; at most 1024");
  });
});

describe("requests", () => {
  test("records cross between binary and HTTP both ways, raw bytes kept", async () => {
    const client = await connect(writer.secret);
    const value = new Uint8Array([0, 1, 254, 255]);
    const [written] = await client.produce("orders", [{ key: "k", value, partition: 1 }]);
    const http = await broker.send("GET", `/topics/orders/consume?partition=1&offset=${written!.offset}&encoding=base64`, undefined, bearer(admin));
    expect(http.body.records[0]).toMatchObject({ key: Buffer.from("k").toString("base64"), value: Buffer.from(value).toString("base64") });
    const viaHttp = await broker.send("POST", "/topics/orders/produce", { records: [{ key: "h", value: "from http", partition: 0 }] }, bearer(admin));
    const read = await client.consume("orders", { partition: 0, offset: viaHttp.body.results[0].offset, maxRecords: 1 });
    expect(read.records.map(recordText)).toEqual([{ key: "h", value: "from http" }]);
    expect(read.partition).toBe(0);
    client.close();
  });

  test("grants, quotas and idempotence are the HTTP ones", async () => {
    const w = await connect(writer.secret);
    expect((await refusal(w.produce("other", [{ value: "x" }]))).status).toBe(403);
    const first = await w.produce("orders", [{ value: "once", partition: 0, sequence: 0 }], "bin-producer");
    const retry = await w.produce("orders", [{ value: "once", partition: 0, sequence: 0 }], "bin-producer");
    expect(retry).toEqual([{ ...first[0]!, duplicate: true }]);
    expect((await refusal(w.produce("orders", [{ value: "gap", partition: 0, sequence: 5 }], "bin-producer"))).message).toContain("sequence gap");
    w.close();
    const r = await connect(reader);
    expect((await refusal(r.produce("orders", [{ value: "x" }]))).status).toBe(403);
    // 100 bytes a second: the first read (300 bytes and more) goes into debt, the next is refused with 429.
    expect((await broker.send("POST", "/topics/orders/produce", { records: [{ value: "q".repeat(300), partition: 0 }] }, bearer(admin))).status).toBe(200);
    expect((await r.consume("orders", { partition: 0, offset: 0, maxRecords: 100 })).records.length).toBeGreaterThan(0);
    const limited = await refusal(r.consume("orders", { partition: 0, offset: 0 }));
    expect(limited.status).toBe(429);
    r.close();
  });

  test("bad requests get error frames and the connection goes on", async () => {
    const client = await connect(writer.secret);
    const unknown = await client.send(0x07, new Uint8Array(0));
    expect(unknown.opcode).toBe(opcodes.error);
    expect(new TextDecoder().decode(unknown.payload)).toStartWith("400 unknown opcode 0x07");
    const truncated = await client.send(
      opcodes.produce,
      encodeProduceRequest({ topic: "orders", producerId: null, records: [{ key: null, value: new Uint8Array(3), partition: null, sequence: null }] }).subarray(
        0,
        20,
      ),
    );
    expect(new TextDecoder().decode(truncated.payload)).toContain("400 malformed produce payload");
    const zero = await client.send(opcodes.consume, encodeConsumeRequest({ topic: "orders", partition: 0, offset: 0, maxRecords: 0, maxBytes: 10 }));
    expect(new TextDecoder().decode(zero.payload)).toContain("max_records is 0");
    expect((await refusal(client.consume("nope", { partition: 0, offset: 0 }))).status).toBe(403);
    expect(await client.ping()).toEqual(new Uint8Array(0));
    client.close();
  });

  test("64 requests in one write: all answered, produces to one topic in the order sent", async () => {
    const client = await connect(writer.secret);
    const frames: Uint8Array[] = [];
    const ids: number[] = [];
    for (let i = 0; i < 64; i++) {
      const id = 1_000_000 + i;
      ids.push(id);
      frames.push(
        i % 2 === 0
          ? encodeFrame(
              id,
              opcodes.produce,
              encodeProduceRequest({
                topic: "orders",
                producerId: null,
                records: [{ key: null, value: new TextEncoder().encode(`seq-${i}`), partition: 1, sequence: null }],
              }),
            )
          : encodeFrame(id, opcodes.ping, new Uint8Array([i])),
      );
    }
    const metricsText = async () => (await fetch(`${broker.url}/metrics`, { headers: bearer(admin) })).text();
    const waited = async () => Number(/^svc_binary_requests_waited_total (\d+)$/m.exec(await metricsText())![1]);
    const waitedBefore = await waited();
    const flushes = async () => Number(/^svc_partition_flushes_total\{topic="orders",partition="1"\} (\d+)$/m.exec(await metricsText())?.[1] ?? 0);
    const flushesBefore = await flushes();
    const answers = ids.map((id) => client.answerTo(id));
    client.writeRaw(Buffer.concat(frames));
    const frameAnswers = await Promise.all(answers);
    expect(frameAnswers.every((f) => f.opcode !== opcodes.error)).toBe(true);
    const offsets = frameAnswers
      .filter((f) => f.opcode === opcodes.produceResponse)
      .map((f) => Number(new DataView(f.payload.buffer, f.payload.byteOffset).getBigUint64(8)));
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    // In order without one fdatasync each: a produce waits for the one before it to take its
    // place in the partition's queue, not for its write, so those in flight share group commits.
    const flushed = (await flushes()) - flushesBefore;
    expect(flushed).toBeGreaterThanOrEqual(1);
    expect(flushed).toBeLessThan(16);
    // 32 ran at once; those past them waited their turn (each counted once) instead of failing.
    const waitedNow = (await waited()) - waitedBefore;
    expect(waitedNow).toBeGreaterThanOrEqual(1);
    expect(waitedNow).toBeLessThanOrEqual(32);
    client.close();
  });
});

describe("connections", () => {
  test("a revoked key's open connection stops at once", async () => {
    const temp = (await broker.send("POST", "/admin/keys", { name: "temp", acls: [{ action: "read", topic_prefix: "*" }] }, bearer(admin))).body;
    const client = await connect(temp.secret);
    expect(await client.ping()).toEqual(new Uint8Array(0));
    expect((await broker.send("DELETE", `/admin/keys/${temp.key_id}`, undefined, bearer(admin))).status).toBe(204);
    const after = await refusal(client.ping());
    expect(after.status).toBe(0);
    expect(client.notices).toEqual(["401 this API key was revoked"]);
  });

  test("a gzip bomb is refused without inflating it whole; the connection goes on", async () => {
    const client = await connect(writer.secret, "gzip");
    expect(client.codec).toBe("gzip");
    const bomb = encodeProduceRequest({
      topic: "orders",
      producerId: null,
      records: [{ key: null, value: new Uint8Array(4 * 1024 * 1024), partition: 0, sequence: null }],
    });
    const compressed = gzipSync(bomb);
    expect(compressed.length).toBeLessThan(64 * 1024);
    const answer = await refusal(client.produce("orders", [{ key: null, value: new Uint8Array(4 * 1024 * 1024), partition: 0 }]));
    expect(answer.status).toBe(413);
    expect(answer.message).toContain("inflates past 1048576 bytes");
    expect((await client.produce("orders", [{ value: "small", partition: 0 }]))[0]!.partition).toBe(0);
    client.close();
  });

  test("lz4: a client asking for gzip and lz4 gets lz4; records go both ways compressed and read back over HTTP", async () => {
    const hello = await rawExchange(encodeClientHandshake(features.gzip | features.lz4, new TextEncoder().encode(writer.secret)));
    expect([hello[4], hello.readUInt32BE(5)]).toEqual([0, features.lz4]);
    const client = await connect(writer.secret, "lz4");
    expect(client.codec).toBe("lz4");
    const value = "lz4 ".repeat(500);
    const [written] = await client.produce("orders", [{ key: "z", value, partition: 1 }]);
    const http = await broker.send("GET", `/topics/orders/consume?partition=1&offset=${written!.offset}&max_records=1`, undefined, bearer(admin));
    expect(http.body.records[0]).toMatchObject({ key: "z", value });
    expect((await client.consume("orders", { partition: 1, offset: written!.offset, maxRecords: 1 })).records.map(recordText)).toEqual([{ key: "z", value }]);
    client.close();
  });

  test("lz4: a payload claiming more than the bound is refused before anything is inflated, bad bytes are a 400, and the connection goes on", async () => {
    const client = await connect(writer.secret, "lz4");
    const ask = async (id: number, payload: Uint8Array) => {
      const answer = client.answerTo(id);
      client.writeRaw(encodeFrame(id, opcodes.produce, payload));
      const frame = await answer;
      return { opcode: frame.opcode, text: new TextDecoder().decode(inflate("lz4", frame.payload, 1 << 20)) };
    };
    // A real bomb: 4 MiB of zeros in a few KiB.
    const bomb = lz4Compress(
      Buffer.from(
        encodeProduceRequest({ topic: "orders", producerId: null, records: [{ key: null, value: new Uint8Array(4 << 20), partition: 0, sequence: null }] }),
      ),
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(await ask(7_001, bomb)).toEqual({ opcode: opcodes.error, text: "413 the payload inflates past 1048576 bytes (--max-request-body-bytes)" });
    // A size of 4 GiB - 1 and nothing behind it: refused by its size alone.
    expect((await ask(7_002, new Uint8Array([0xff, 0xff, 0xff, 0xff]))).text).toStartWith("413 ");
    // One past the bound, and at it (then the bytes are not lz4: 400).
    const sized = (size: number) => new Uint8Array([size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >>> 24, 0xf0, 0x00]);
    expect((await ask(7_003, sized((1 << 20) + 1))).text).toStartWith("413 ");
    expect((await ask(7_004, sized(1 << 20))).text).toStartWith("400 the payload is not valid lz4");
    expect((await ask(7_005, new Uint8Array([1, 2]))).text).toStartWith("400 the payload is not valid lz4");
    expect((await client.produce("orders", [{ value: "small", partition: 0 }]))[0]!.partition).toBe(0);
    client.close();
  });
});

describe("connection limits (a broker of their own)", () => {
  let b: BinaryBrokerProcess;
  beforeAll(async () => {
    b = await startBinaryBroker(freshDataDir(), ["--binary-idle-timeout", "1s", "--binary-max-connections-per-ip", "2"]);
    await b.call("POST", "/topics", { name: "big", partitions: 1 });
  });
  afterAll(() => b.stop());
  const open = () => BinaryClient.connect({ host: b.binaryHost, port: b.binaryPort });

  test("a connection idle past --binary-idle-timeout is told and closed", async () => {
    const client = await open();
    await Bun.sleep(2500);
    expect(client.notices[0]).toStartWith("408 the connection sent nothing for 1 s");
    expect((await refusal(client.ping())).status).toBe(0);
  });

  test("one address holds at most --binary-max-connections-per-ip; the next is closed at once", async () => {
    const [a, c] = [await open(), await open()];
    const third = await refusal(open());
    expect(third.status).toBe(0);
    a.close();
    await Bun.sleep(100);
    const again = await open();
    expect(await again.ping()).toEqual(new Uint8Array(0));
    again.close();
    c.close();
    await Bun.sleep(100);
  });

  test("a client that stops reading is disconnected once its unread answers pass the bound", async () => {
    const value = "v".repeat(1024 * 1024);
    for (let i = 0; i < 8; i++) expect((await b.call("POST", "/topics/big/produce", { records: [{ value }] })).status).toBe(200);
    const closed = await new Promise<boolean>((resolve) => {
      const socket = netConnect(b.binaryPort, "127.0.0.1", () => {
        socket.write(encodeClientHandshake(0, new Uint8Array(0)));
        // Ten reads of the whole 8 MiB, and never a byte read back.
        socket.pause();
        const consume = encodeConsumeRequest({ topic: "big", partition: 0, offset: 0, maxRecords: 100, maxBytes: 8 * 1024 * 1024 });
        for (let i = 1; i <= 10; i++) socket.write(encodeFrame(i, opcodes.consume, consume));
      });
      socket.on("close", () => resolve(true));
      socket.on("error", () => undefined);
      setTimeout(() => {
        // Start reading only now: by then a broker that holds every answer would still be connected.
        socket.resume();
        setTimeout(() => resolve(false), 3000);
      }, 1500);
    });
    expect(closed).toBe(true);
    expect(b.output()).toContain("stopped reading its responses");
  });
});

describe("TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-bin-tls-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("with the broker's certificate the binary listener speaks TLS", async () => {
    const { cert, key } = makeCertificate(dir);
    const b = await startBinaryBroker(freshDataDir(), ["--tls-cert", cert, "--tls-key", key]);
    try {
      expect(b.output()).toContain("SV01+TLS on");
      const client = await BinaryClient.connect({ host: b.binaryHost, port: b.binaryPort, tls: { ca: readFileSync(cert, "utf8") } });
      expect(await client.ping(new Uint8Array([9]))).toEqual(new Uint8Array([9]));
      client.close();
      // A plain-text client gets no SV01 answer from a TLS listener.
      const plain = await rawExchange(encodeClientHandshake(0, new Uint8Array(0)), b.binaryPort);
      expect(plain.subarray(0, 4).toString()).not.toBe("SV01");
    } finally {
      await b.stop();
    }
  });
});
