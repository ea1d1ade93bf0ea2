/**
 * One binary-protocol connection (spec: Binary protocol; Connection rules): the handshake, then
 * frames run through the same operations as HTTP (requests/operations.ts), answered by request id
 * in whatever order they finish.
 *
 * - In flight: at most 32 requests per connection run at once. The 33rd waits: the connection
 *   stops taking frames (and stops reading its socket) until one finishes — backpressure rather
 *   than an error the client must retry. Produces to one topic run one after another, in the
 *   order they arrived; everything else runs side by side.
 * - A shared budget (BinaryLimits.inFlightBytesMax) caps the bytes of requests running on every
 *   connection together; a frame that would pass it waits like the 33rd.
 * - Output the client has not read is bounded: past `unreadOutputBytesMax` the connection is
 *   closed, so a client that stops reading cannot make the broker hold its responses forever.
 * - gzip or lz4 (compression.ts): the spec wants grants checked against the topic before a
 *   compressed frame is inflated, but the topic is inside the compressed payload. So at the
 *   frame's start the key must be live and hold the opcode's action on some prefix; the payload is
 *   then inflated with its size capped at --max-request-body-bytes (a bomb is refused without
 *   being inflated whole), and the topic's own grant is checked by the operation before anything
 *   else happens.
 */
import { isSvcError, SvcError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { Action } from "../auth/authorizer.ts";
import type { Principal } from "../auth/principal.ts";
import type { Broker } from "../broker.ts";
import { planRecords } from "../produce/request.ts";
import { produceOperation, readOperation } from "../requests/operations.ts";
import { checkTopicName } from "../topics/names.ts";
import { acceptedFeatures, type Codec, codecOf, compress, inflate } from "./compression.ts";
import { FrameReader, WireError } from "./frame-reader.ts";
import { decodeConsumeRequest, decodeProduceFrames, encodeConsumeResponse, encodeProduceResponse, payloadTopic } from "./payloads.ts";
import { encodeServerHandshake, type Frame, frameHeaderBytes, handshakeStatus, opcodes, withHeaderRoom, writeFrameHeader } from "./wire.ts";

export interface BinaryLimits {
  /** --max-request-body-bytes: largest payload, compressed or inflated. */
  payloadBytesMax: number;
  /** Largest handshake token (spec: 1024). */
  tokenBytesMax: number;
  /** Requests running at once on one connection (spec: 32). */
  inFlightPerConnection: number;
  /** Responses written but not yet read by the client, bytes, before it is disconnected. */
  unreadOutputBytesMax: number;
}

/** What a connection needs from its socket. */
export interface SocketIo {
  /** Writes what it can now; answers how many bytes it took. */
  write(bytes: Uint8Array): number;
  pause(): void;
  resume(): void;
  end(): void;
  readonly remoteAddress: string;
}

/** The bytes of requests running on every connection, against one budget. */
export class InFlightBudget {
  used = 0;
  constructor(readonly bytesMax: number) {}
  /** Whether `bytes` more fit; a request larger than the whole budget runs once it is alone. */
  fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.bytesMax;
  }
}

const encoder = new TextEncoder();

/** An answer to a request, as the error frame carries it: the HTTP status the same failure gets, then the message. */
function errorText(error: unknown): string {
  if (isSvcError(error)) return `${error.status} ${error.message}`;
  return "500 internal error";
}

const actionOf: Record<number, Action> = { [opcodes.produce]: "write", [opcodes.consume]: "read" };

export class BinaryConnection {
  private readonly reader: FrameReader;
  private principal: Principal | null = null;
  /** The payload codec the handshake agreed on; null for none. */
  private codec: Codec | null = null;
  private closed = false;
  private inFlight = 0;
  /** A frame taken off the wire that waits for room (in-flight slots or the byte budget). */
  private held: Frame | null = null;
  /** Per topic, when the last produce of this connection holds its place in line: the next one waits for that. */
  private readonly produceChains = new Map<string, Promise<unknown>>();
  /** Output the socket did not take yet. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private paused = false;
  /** When the client last sent anything (performance.now(), ms): the idle timeout's measure. */
  lastHeardMs = performance.now();

  constructor(
    private readonly broker: Broker,
    private readonly io: SocketIo,
    private readonly limits: BinaryLimits,
    private readonly budget: InFlightBudget,
    private readonly log: Logger,
    /** Told when the connection has closed (the listener's bookkeeping). */
    private readonly onClose: (connection: BinaryConnection) => void,
  ) {
    this.reader = new FrameReader(limits.payloadBytesMax, limits.tokenBytesMax);
  }

  /** The key the connection acts as, once the handshake is done (null: anonymous or not yet). */
  get keyId(): string | null {
    return this.principal?.kind === "key" ? this.principal.keyId : null;
  }

  data(bytes: Uint8Array): void {
    if (this.closed) return;
    this.lastHeardMs = performance.now();
    this.reader.push(bytes);
    try {
      if (this.principal === null && !this.handshake()) return;
      this.pump();
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
      // The stream cannot be read on: say why and close — in the handshake's status if it is
      // still the handshake, else in an error frame of request id 0 (nothing was asked).
      if (this.principal === null) this.refuse(handshakeStatus.authFailed, error.message);
      else this.stop(`400 ${error.message}`);
    }
  }

  /** The socket took what we gave it: write what is still pending. */
  drain(): void {
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      const wrote = this.io.write(next);
      this.pendingBytes -= wrote;
      if (wrote < next.length) {
        this.pending[0] = next.subarray(wrote);
        return;
      }
      this.pending.shift();
    }
  }

  /** Ends the connection now (revocation, idle timeout, a client that does not read). */
  stop(reason: string): void {
    if (this.closed) return;
    this.sendFrame(0, opcodes.error, withHeaderRoom(encoder.encode(reason)));
    this.close();
  }

  closedBySocket(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.io.end();
    this.onClose(this);
  }

  /** Answers the handshake once it is all there; false until then (or if it failed). */
  private handshake(): boolean {
    const hello = this.reader.takeHandshake();
    if (hello === null) return false;
    const { pipeline } = this.broker;
    if (!hello.magicOk) return this.refuse(handshakeStatus.badMagic, "bad magic: a connection starts with SV01");
    const accepted = acceptedFeatures(hello.requested);
    if (pipeline.authRequired && hello.token.length === 0)
      return this.refuse(handshakeStatus.authRequired, "this broker requires an API key in the handshake token");
    let principal: Principal;
    try {
      principal = pipeline.authenticate(hello.token.length === 0 ? null : new TextDecoder().decode(hello.token));
    } catch (error) {
      return this.refuse(handshakeStatus.authFailed, isSvcError(error) ? error.message : "authentication failed");
    }
    this.principal = principal;
    this.codec = codecOf(accepted);
    this.send(encodeServerHandshake(handshakeStatus.ok, accepted, "ok"));
    return true;
  }

  private refuse(status: (typeof handshakeStatus)[keyof typeof handshakeStatus], message: string): false {
    this.send(encodeServerHandshake(status, 0, message));
    this.close();
    return false;
  }

  /** Starts every frame there is room for; pauses the socket when there is none. */
  private pump(): void {
    while (!this.closed) {
      const frame = this.held ?? this.reader.takeFrame();
      if (frame === null) break;
      if (this.inFlight >= this.limits.inFlightPerConnection || !this.budget.fits(frame.payload.length)) {
        if (this.held === null) this.broker.metrics.binaryRequestWaited();
        this.held = frame;
        if (!this.paused) {
          this.paused = true;
          this.io.pause();
        }
        return;
      }
      this.held = null;
      this.start(frame);
    }
    if (this.paused) {
      this.paused = false;
      this.io.resume();
    }
  }

  private start(frame: Frame): void {
    this.inFlight++;
    const bytes = frame.payload.length;
    this.budget.used += bytes;
    const finish = (opcode: number, framed: Uint8Array) => {
      this.inFlight--;
      this.budget.used -= bytes;
      if (this.closed) return;
      this.sendFrame(frame.requestId, opcode, framed);
      this.pump();
    };
    this.run(frame).then(
      ([opcode, framed]) => finish(opcode, framed),
      (error: unknown) => {
        if (!isSvcError(error)) this.log.error({ err: error, requestId: frame.requestId }, "binary request failed");
        finish(opcodes.error, withHeaderRoom(encoder.encode(errorText(error))));
      },
    );
  }

  /** Runs one frame; answers the response's opcode and its payload, with a frame header's room before it. */
  private async run(frame: Frame): Promise<[number, Uint8Array]> {
    const principal = this.principal!;
    const { pipeline } = this.broker;
    const action = actionOf[frame.opcode];
    if (frame.opcode === opcodes.ping) return [opcodes.pingResponse, withHeaderRoom(this.inflate(frame.payload))];
    if (action === undefined)
      throw new SvcError("bad_request", `unknown opcode 0x${frame.opcode.toString(16).padStart(2, "0")}; requests are 0x01 produce, 0x02 consume, 0x03 ping`);
    // Before inflating: the key is live and may take this action somewhere.
    pipeline.authorizeSomewhere(principal, action);
    const payload = this.inflate(frame.payload);
    if (frame.opcode === opcodes.produce) {
      const topic = checkTopicName(payloadTopic(payload, "produce"), "topic");
      // The next produce to this topic starts once this one holds its place in the partitions'
      // queues (or has failed): that keeps their order without waiting for the disk, so the
      // requests a client has in flight share one group commit.
      const previous = this.produceChains.get(topic) ?? Promise.resolve();
      let inLine!: () => void;
      const placed = new Promise<void>((resolve) => (inLine = resolve));
      const result = previous.then(() =>
        produceOperation(
          this.broker,
          principal,
          topic,
          (t) => {
            const request = decodeProduceFrames(payload);
            return planRecords(request.producerId, request.records, t, this.broker.options);
          },
          inLine,
        ),
      );
      void result.then(inLine, inLine);
      this.produceChains.set(topic, placed);
      void placed.then(() => {
        if (this.produceChains.get(topic) === placed) this.produceChains.delete(topic);
      });
      return [opcodes.produceResponse, encodeProduceResponse(await result, frameHeaderBytes)];
    }
    const topic = checkTopicName(payloadTopic(payload, "consume"), "topic");
    let partition = 0;
    const read = await readOperation(this.broker, principal, topic, () => {
      const request = decodeConsumeRequest(payload);
      const { fetchRecordsMax, fetchBytesMax } = this.broker.options;
      if (request.maxRecords < 1 || request.maxRecords > fetchRecordsMax)
        throw new SvcError("bad_request", `max_records is ${request.maxRecords}; it must be from 1 to ${fetchRecordsMax}`);
      if (request.maxBytes < 1 || request.maxBytes > fetchBytesMax)
        throw new SvcError("bad_request", `max_bytes is ${request.maxBytes}; it must be from 1 to ${fetchBytesMax}`);
      partition = request.partition;
      return request;
    });
    return [opcodes.consumeResponse, encodeConsumeResponse({ ...read, partition }, frameHeaderBytes)];
  }

  /** The payload as sent, inflated if a codec was negotiated — never past the payload bound. */
  private inflate(payload: Uint8Array): Uint8Array {
    return this.codec === null ? payload : inflate(this.codec, payload, this.limits.payloadBytesMax);
  }

  /** Sends a response whose payload follows a header's room in `framed`, compressed if a codec was negotiated. */
  private sendFrame(requestId: number, opcode: number, framed: Uint8Array): void {
    const out = this.codec === null ? framed : withHeaderRoom(compress(this.codec, framed.subarray(frameHeaderBytes)));
    this.send(writeFrameHeader(out, requestId, opcode));
  }

  /** Writes `bytes`, keeping what the socket does not take; disconnects a client that stops reading. */
  private send(bytes: Uint8Array): void {
    if (this.pending.length === 0) {
      const wrote = this.io.write(bytes);
      if (wrote === bytes.length) return;
      bytes = bytes.subarray(wrote);
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes > this.limits.unreadOutputBytesMax && !this.closed) {
      this.log.warn({ client: this.io.remoteAddress, unread: this.pendingBytes }, "binary client stopped reading its responses; disconnecting it");
      this.pending = [];
      this.pendingBytes = 0;
      this.close();
    }
  }
}
