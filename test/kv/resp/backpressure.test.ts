// Clients that do not read their replies, against a real `svc kv` process. svc's own limits
// (src/core/limits.ts) define what must happen, so these tests hard-code them:
//
// - kvOutputPauseBytes: a client that pipelines large GETs and never reads costs the server a
//   bounded amount of memory — its requests wait in the kernel, not its replies in our heap — and
//   every other client keeps being served; once it reads, it gets every reply, whole and in order.
// - kvPubsubOutputBytesMax: a subscriber that never reads is disconnected once more than 32 MiB
//   of messages wait for it, never before, while PUBLISH keeps working for everyone else. Redis's
//   pubsub client-output-buffer-limit hard limit is the same 32 MiB, so redis-server plays the same
//   scenario as a reference.
// - kvMonitorOutputBytesMax: so is a MONITOR client 32 MiB behind (Redis sets monitors no limit).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeCommand, RespClient } from "../support/resp-client.ts";
import { rssBytes, type ServerProcess, startKv, startRedis } from "../support/servers.ts";
import { RawConnection, unreadBytes, waitUntil } from "../support/wire.ts";

const MiB = 1024 * 1024;
/** src/core/limits.ts kvPubsubOutputBytesMax (and Redis's pubsub hard limit). */
const pubsubOutputBytesMax = 32 * MiB;
/**
 * A generous bound on what loopback TCP buffers absorb for one connection before the server's
 * own buffer grows (tcp_wmem max 4 MiB plus a receive queue that does not grow while unread).
 */
const kernelBufferSlackBytes = 16 * MiB;
/**
 * "The server is not stuck": how long one round trip of another client may take while the slow
 * client is stalled. A liveness deadline, thousands of times a normal round trip, not a benchmark.
 */
const livenessDeadlineMs = 2000;

let kv: ServerProcess;

beforeAll(async () => {
  kv = await startKv();
});

afterAll(async () => {
  await kv?.stop();
});

/** Resolves with `promise`, or fails naming `what` if it takes longer than `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms: the server looks stuck`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks a stream that must be `reply` repeated, chunk by chunk, without keeping it. */
class RepeatedReplyChecker {
  bytes = 0;
  firstBadByte = -1;
  constructor(private readonly reply: Buffer) {}

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && this.firstBadByte === -1) {
      const offset = this.bytes % this.reply.length;
      const n = Math.min(this.reply.length - offset, chunk.length - at);
      if (!chunk.subarray(at, at + n).equals(this.reply.subarray(offset, offset + n))) this.firstBadByte = this.bytes;
      this.bytes += n;
      at += n;
    }
  }
}

describe("a client that pipelines large GETs and never reads", () => {
  const valueBytes = 1 * MiB;
  const getCount = 1000;

  // One 26 KB read of 1000 GETs would make ~1 GiB of replies. svc stops running a client's
  // commands once kvOutputPauseBytes of replies wait for it, and stops reading it until it catches
  // up. Redis has no limit here (client-output-buffer-limit normal 0 0 0); this one is svc's own.
  test("costs bounded memory, does not stall other clients, and gets every reply once it reads", async () => {
    const value = Buffer.alloc(valueBytes);
    for (let i = 0; i < value.length; i++) value[i] = (i * 7 + 3) & 0xff;
    const reply = Buffer.concat([Buffer.from(`$${valueBytes}\r\n`), value, Buffer.from("\r\n")]);
    const other = await RespClient.connect(kv.port);
    expect(await other.call("SET", "bp:big", value.toString("latin1"))).toEqual({ s: "OK" });
    const baseline = rssBytes(kv.proc.pid);

    const slow = await RawConnection.open(kv.port);
    const checker = new RepeatedReplyChecker(reply);
    slow.onChunk = (chunk) => checker.feed(chunk);
    slow.pause();
    slow.write(Buffer.concat(Array.from({ length: getCount }, () => encodeCommand(["GET", "bp:big"]))));
    await slow.flushed();

    // While the slow client reads nothing, another client is served normally, round trip after
    // round trip, and the server's memory stays far below the 1 GiB of replies asked for.
    let peakRss = 0;
    for (let i = 0; i < 50; i++) {
      expect(await within(livenessDeadlineMs, "a PING from another client", other.call("PING"))).toEqual({ s: "PONG" });
      expect(await within(livenessDeadlineMs, "an INCR from another client", other.call("INCR", "bp:counter"))).toBe(BigInt(i + 1));
      peakRss = Math.max(peakRss, rssBytes(kv.proc.pid));
      await Bun.sleep(10);
    }
    // The slow client really is not reading: replies wait in its kernel receive queue.
    expect(unreadBytes(slow.localPort)).toBeGreaterThan(0);
    const totalReplyBytes = getCount * reply.length;
    expect(peakRss - baseline).toBeLessThan(128 * MiB);
    expect(peakRss - baseline).toBeLessThan(totalReplyBytes / 8);

    // Once it reads, every reply arrives, complete and byte for byte right.
    slow.resume();
    await waitUntil(() => (checker.bytes >= totalReplyBytes || checker.firstBadByte !== -1 || slow.closed ? true : undefined), "every GET reply", 25_000);
    expect(checker.firstBadByte).toBe(-1);
    expect(checker.bytes).toBe(totalReplyBytes);
    expect(slow.closed).toBe(false);
    slow.close();
    other.close();
  }, 30_000);
});

/**
 * Publishes `messageBytes` messages until the slow subscriber is gone (PUBSUB NUMSUB counts only
 * the fast one) or `bytesMax` have been published; returns the bytes published before it went.
 */
async function publishUntilDropped(port: number, messageBytes: number, bytesMax: number) {
  const publisher = await RespClient.connect(port);
  const fast = await RespClient.connect(port);
  expect(await fast.call("SUBSCRIBE", "bp:news")).toEqual(["subscribe", "bp:news", 1n]);
  const slow = await RawConnection.open(port);
  slow.write(encodeCommand(["SUBSCRIBE", "bp:news"]));
  await slow.settle({ atLeast: 1 });
  expect(slow.received.toString("latin1")).toBe("*3\r\n$9\r\nsubscribe\r\n$7\r\nbp:news\r\n:1\r\n");
  slow.pause();

  const message = "m".repeat(messageBytes);
  const publishCounts: bigint[] = [];
  let published = 0;
  let droppedAfterBytes = -1;
  while (published < bytesMax) {
    publishCounts.push((await publisher.call("PUBLISH", "bp:news", message)) as bigint);
    published += messageBytes;
    const numsub = (await publisher.call("PUBSUB", "NUMSUB", "bp:news")) as [string, bigint];
    if (numsub[1] === 1n) {
      droppedAfterBytes = published;
      break;
    }
    expect(numsub).toEqual(["bp:news", 2n]);
  }
  // PUBLISH still works for the others: the next message reaches just the fast subscriber...
  const afterDrop = droppedAfterBytes === -1 ? null : await publisher.call("PUBLISH", "bp:news", "after");
  // ... which got every message, in order.
  let fastGot = 0;
  for (let i = 0; i < publishCounts.length; i++) {
    const m = (await fast.read()) as string[];
    if (m[0] === "message" && m[1] === "bp:news" && m[2]?.length === messageBytes) fastGot++;
  }
  const last = droppedAfterBytes === -1 ? null : await fast.read();
  slow.resume();
  await waitUntil(() => (slow.closed ? true : undefined), "the slow subscriber's connection to close", 5000).catch(() => undefined);
  const result = { droppedAfterBytes, publishCounts, afterDrop, fastGot, last, slowClosed: slow.closed };
  publisher.close();
  fast.close();
  slow.close();
  return result;
}

describe("a subscriber that never reads", () => {
  const messageBytes = 256 * 1024;
  const bytesMax = pubsubOutputBytesMax + kernelBufferSlackBytes + 16 * MiB;

  test("is disconnected once past 32 MiB behind, never before, while PUBLISH keeps working for others (as redis-server)", async () => {
    const redis = await startRedis();
    try {
      for (const [name, port] of [
        ["redis-server", redis.port],
        ["svc kv", kv.port],
      ] as const) {
        const r = await publishUntilDropped(port, messageBytes, bytesMax);
        const where = `${name}: dropped after ${r.droppedAfterBytes} bytes published`;
        expect(r.droppedAfterBytes, where).toBeGreaterThan(pubsubOutputBytesMax);
        expect(r.droppedAfterBytes, where).toBeLessThanOrEqual(pubsubOutputBytesMax + kernelBufferSlackBytes);
        // Every PUBLISH before the drop counted both subscribers.
        expect(new Set(r.publishCounts), name).toEqual(new Set([2n]));
        expect(r.afterDrop, name).toBe(1n);
        expect(r.fastGot, name).toBe(r.publishCounts.length);
        expect(r.last, name).toEqual(["message", "bp:news", "after"]);
        expect(r.slowClosed, name).toBe(true);
      }
    } finally {
      await redis.stop();
    }
  }, 30_000);
});

describe("a monitor that never reads", () => {
  /** src/core/limits.ts kvMonitorOutputBytesMax. */
  const monitorOutputBytesMax = 32 * MiB;
  const valueBytes = 256 * 1024;

  test("is disconnected once past 32 MiB behind, never before, while the writes it watches go on (Redis sets no limit)", async () => {
    const writer = await RespClient.connect(kv.port);
    const slow = await RawConnection.open(kv.port);
    slow.write(encodeCommand(["MONITOR"]));
    await slow.settle({ atLeast: 5 });
    expect(slow.received.toString("latin1")).toBe("+OK\r\n");
    slow.pause();
    const value = "v".repeat(valueBytes);
    let written = 0;
    let droppedAfterBytes = -1;
    while (written < monitorOutputBytesMax + kernelBufferSlackBytes + 16 * MiB) {
      expect(await writer.call("SET", "bp:watched", value)).toEqual({ s: "OK" });
      written += valueBytes;
      const list = (await writer.call("CLIENT", "LIST")) as string;
      if (!list.includes("flags=O")) {
        droppedAfterBytes = written;
        break;
      }
    }
    expect(droppedAfterBytes).toBeGreaterThan(monitorOutputBytesMax);
    expect(droppedAfterBytes).toBeLessThanOrEqual(monitorOutputBytesMax + kernelBufferSlackBytes);
    expect(await writer.call("STRLEN", "bp:watched")).toBe(BigInt(valueBytes));
    slow.resume();
    writer.close();
    slow.close();
  }, 30_000);
});
