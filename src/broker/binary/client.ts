/**
 * A client of the broker's SV01 binary protocol, for applications and for our tests (docs/broker.md,
 * "Binary protocol"):
 *
 *   const client = await BinaryClient.connect({ host: "127.0.0.1", port: 9092, token: secret, compression: "lz4" });
 *   const results = await client.produce("orders", [{ key: "k1", value: "hello" }]);
 *   const read = await client.consume("orders", { partition: 0, offset: 0 });
 *   client.close();
 *
 * Requests are pipelined: each gets a request id and its promise resolves when the broker answers
 * that id, in whatever order answers come. An error frame rejects with a BinaryError whose
 * `status` is the HTTP status the same failure gets (429 with a quota, 403 without a grant...).
 */
import type { Socket } from "bun";
import type { LogRecord } from "../log/record.ts";
import type { ProduceResult } from "../produce/request.ts";
import { type Codec, codecOf, compress, inflate } from "./compression.ts";
import { FrameReader } from "./frame-reader.ts";
import { type ConsumeResponse, decodeConsumeResponse, decodeProduceResponse, encodeConsumeRequest, encodeProduceRequest } from "./payloads.ts";
import { encodeClientHandshake, features, type Frame, frameHeaderBytes, opcodes, withHeaderRoom, writeFrameHeader } from "./wire.ts";

/** The largest answer the client accepts: a consume's 8 MiB of records and their framing, with room to spare. */
const responseBytesMax = 64 * 1024 * 1024;
const encoder = new TextEncoder();
const bytesOf = (v: Uint8Array | string) => (typeof v === "string" ? encoder.encode(v) : v);

export class BinaryError extends Error {
  override name = "BinaryError";
  constructor(
    /** The HTTP status the broker gives the same failure; 0 for a connection-level failure. */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ConnectOptions {
  host: string;
  port: number;
  /** An API key's secret; needed with `--auth required`. */
  token?: string;
  /** Ask for compressed payloads (compression.ts); the broker may accept only some. */
  compression?: Codec;
  /** Connect with TLS, trusting `ca` (PEM) if given. */
  tls?: { ca?: string };
}

export interface ClientRecord {
  key?: Uint8Array | string | null;
  value: Uint8Array | string;
  /** The partition; by key (or round-robin) when absent. */
  partition?: number;
  /** With a producer id: the record's sequence in its partition. */
  sequence?: number;
}

interface Pending {
  resolve(frame: Frame): void;
  reject(error: Error): void;
}

export class BinaryClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: Error | null = null;

  private constructor(
    private readonly socket: Socket<undefined>,
    private readonly reader: FrameReader,
    /** The codec the broker accepted; null for none. */
    readonly codec: Codec | null,
  ) {}

  /** Connects and completes the handshake; rejects with the broker's status and message if it is refused. */
  static connect(options: ConnectOptions): Promise<BinaryClient> {
    const reader = new FrameReader(responseBytesMax, 0);
    return new Promise((resolve, reject) => {
      let client: BinaryClient | null = null;
      const fail = (error: Error) => {
        if (client === null) reject(error);
        else client.failAll(error);
      };
      void Bun.connect({
        hostname: options.host,
        port: options.port,
        ...(options.tls === undefined ? {} : { tls: options.tls.ca === undefined ? true : { ca: options.tls.ca } }),
        socket: {
          open(socket) {
            const asked = options.compression === undefined ? 0 : features[options.compression];
            socket.write(encodeClientHandshake(asked, encoder.encode(options.token ?? "")));
          },
          data(socket, bytes) {
            reader.push(bytes);
            try {
              if (client === null) {
                const answer = reader.takeServerHandshake();
                if (answer === null) return;
                if (answer.status !== 0) {
                  // Rejected before the socket ends: ending it runs the close handler at once.
                  reject(new BinaryError(answer.status, `handshake refused (status ${answer.status}): ${answer.message}`));
                  socket.end();
                  return;
                }
                client = new BinaryClient(socket, reader, codecOf(answer.accepted));
                resolve(client);
              }
              client.takeFrames();
            } catch (error) {
              fail(error as Error);
              socket.end();
            }
          },
          close() {
            fail(new BinaryError(0, "the connection closed"));
          },
          error(_socket, error) {
            fail(error);
          },
          connectError(_socket, error) {
            reject(error);
          },
        },
      }).catch(reject);
    });
  }

  /** Produces `records` to `topic`; answers one result per record, in order. */
  async produce(topic: string, records: readonly ClientRecord[], producerId: string | null = null): Promise<ProduceResult[]> {
    const payload = encodeProduceRequest(
      {
        topic,
        producerId,
        records: records.map((r) => ({
          key: r.key === undefined || r.key === null ? null : bytesOf(r.key),
          value: bytesOf(r.value),
          partition: r.partition ?? null,
          sequence: r.sequence ?? null,
        })),
      },
      frameHeaderBytes,
    );
    return decodeProduceResponse(await this.request(opcodes.produce, payload, opcodes.produceResponse));
  }

  /** Reads a partition from `offset`; the next read starts at the answer's nextOffset. */
  async consume(topic: string, p: { partition: number; offset: number; maxRecords?: number; maxBytes?: number }): Promise<ConsumeResponse> {
    const payload = encodeConsumeRequest({
      topic,
      partition: p.partition,
      offset: p.offset,
      maxRecords: p.maxRecords ?? 100,
      maxBytes: p.maxBytes ?? 1024 * 1024,
    });
    return decodeConsumeResponse(await this.request(opcodes.consume, withHeaderRoom(payload), opcodes.consumeResponse));
  }

  /** A round trip; the broker echoes `payload`. */
  ping(payload: Uint8Array = new Uint8Array(0)): Promise<Uint8Array> {
    return this.request(opcodes.ping, withHeaderRoom(payload), opcodes.pingResponse);
  }

  /** Sends a frame of any opcode and answers the response frame as it came (for tests of the wire itself). */
  send(opcode: number, payload: Uint8Array): Promise<Frame> {
    return this.frame(opcode, withHeaderRoom(payload));
  }

  /** Writes raw bytes on the connection (for tests of the wire itself). */
  writeRaw(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Waits for the answer to a request id written with writeRaw. */
  answerTo(requestId: number): Promise<Frame> {
    return new Promise((resolve, reject) => this.pending.set(requestId, { resolve, reject }));
  }

  /** The error frames the broker sent unasked (request id 0: an idle timeout, a revoked key). */
  readonly notices: string[] = [];

  close(): void {
    this.socket.end();
  }

  /** Sends `framed` (a payload after a frame header's room) and answers the response's payload. */
  private async request(opcode: number, framed: Uint8Array, expected: number): Promise<Uint8Array> {
    const frame = await this.frame(opcode, framed);
    const body = this.inflated(frame.payload);
    if (frame.opcode === opcodes.error) {
      const text = new TextDecoder().decode(body);
      const status = /^(\d{3}) /.exec(text);
      throw new BinaryError(status === null ? 0 : Number(status[1]), status === null ? text : text.slice(4));
    }
    if (frame.opcode !== expected) throw new BinaryError(0, `expected opcode 0x${expected.toString(16)}, got 0x${frame.opcode.toString(16)}`);
    return body;
  }

  /** A response's payload as the broker meant it. */
  private inflated(payload: Uint8Array): Uint8Array {
    return this.codec === null ? payload : inflate(this.codec, payload, responseBytesMax);
  }

  /** Sends a payload that follows a frame header's room in `framed` (compressed if a codec was agreed); answers the response frame. */
  private frame(opcode: number, framed: Uint8Array): Promise<Frame> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const requestId = this.nextId;
    this.nextId = this.nextId === 0xffffffff ? 1 : this.nextId + 1;
    const answer = this.answerTo(requestId);
    const out = this.codec === null ? framed : withHeaderRoom(compress(this.codec, framed.subarray(frameHeaderBytes)));
    this.socket.write(writeFrameHeader(out, requestId, opcode));
    return answer;
  }

  private takeFrames(): void {
    for (let frame = this.reader.takeFrame(); frame !== null; frame = this.reader.takeFrame()) {
      const waiting = this.pending.get(frame.requestId);
      if (waiting === undefined) {
        const body = this.inflated(frame.payload);
        this.notices.push(new TextDecoder().decode(body));
        continue;
      }
      this.pending.delete(frame.requestId);
      waiting.resolve(frame);
    }
  }

  private failAll(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

/** Records as strings, for tests and examples. */
export function recordText(record: LogRecord): { key: string | null; value: string } {
  const decoder = new TextDecoder();
  return { key: record.key === null ? null : decoder.decode(record.key), value: decoder.decode(record.value) };
}
