/**
 * A slot switched inside the mediasoup worker: one consumer, one SSRC its receiver knows, fed by
 * whichever producer of its router the slot chooser picks. The worker's `consumer.setProducer`
 * request (media-worker/patches/, our patch to the worker) moves the consumer to another producer;
 * the worker continues its sequence numbers, advances its timestamps by the wall time since its
 * last packet, marks the first packet of the new source, and sends with the payload type its
 * receiver offered. No packet passes through JavaScript.
 *
 * The request is sent on the consumer's own channel, as mediasoup's `setPriority` is. mediasoup's
 * npm package knows nothing of it, so the message is built here: the method and body numbers are
 * the ones the patch appends to the worker's request schema (after every number the package
 * sends), and the body is the schema's two-field `SetProducerRequest` table.
 */
import type { types } from "mediasoup";

/** `FBS.Request.Method.CONSUMER_SET_PRODUCER`: appended after RTPOBSERVER_REMOVE_PRODUCER (67). */
const methodConsumerSetProducer = 68;
/** `FBS.Request.Body.Consumer_SetProducerRequest`: appended after RtpObserver_RemoveProducerRequest (39). */
const bodyConsumerSetProducer = 40;
/** `SetProducerRequest`'s fields, in schema order. */
const producerIdField = 0;
const payloadTypeField = 1;
const setProducerFieldCount = 2;
/** RTP payload types are 7 bits. */
const payloadTypeMax = 127;

/** The part of flatbuffers' Builder the request needs. */
interface RequestBuilder {
  createString(text: string): number;
  startObject(fields: number): void;
  addFieldOffset(field: number, value: number, defaultValue: number): void;
  addFieldInt8(field: number, value: number, defaultValue: number | null): void;
  endObject(): number;
}

/** The part of mediasoup's Channel the request needs: its builder and its request call. */
interface WorkerChannel {
  bufferBuilder: RequestBuilder;
  request(method: number, bodyType?: number, bodyOffset?: number, handlerId?: string): Promise<unknown>;
}

/** The consumer's channel: mediasoup exposes it as `channelForTesting` (not on its public types). */
function channelOf(consumer: types.Consumer): WorkerChannel {
  const channel = (consumer as unknown as { channelForTesting?: WorkerChannel }).channelForTesting;
  if (channel === undefined || typeof channel.request !== "function") {
    throw new Error("this mediasoup no longer exposes Consumer.channelForTesting: update src/media/worker-slot.ts");
  }
  return channel;
}

/**
 * Points `consumer` at `producerId` (a producer of its router), or at nothing with null. From
 * then on it sends with `payloadType` when given. Resolves once the worker has switched, so the
 * next packet forwarded is the new source's; rejects (changing nothing) for an unknown producer,
 * one of another kind, or a consumer that is not a simple audio one.
 */
export function setSlotProducer(consumer: types.Consumer, producerId: string | null, payloadType?: number): Promise<unknown> {
  if (payloadType !== undefined && !(Number.isInteger(payloadType) && payloadType >= 0 && payloadType <= payloadTypeMax)) {
    throw new RangeError(`payload type ${payloadType} is not 0..${payloadTypeMax}`);
  }
  const channel = channelOf(consumer);
  // Built and sent with nothing in between: the builder is the channel's, shared by every request.
  const builder = channel.bufferBuilder;
  const producerIdOffset = producerId === null ? 0 : builder.createString(producerId);
  builder.startObject(setProducerFieldCount);
  if (producerIdOffset !== 0) builder.addFieldOffset(producerIdField, producerIdOffset, 0);
  // An optional field (no default): written whenever given.
  if (payloadType !== undefined) builder.addFieldInt8(payloadTypeField, payloadType, null);
  const body = builder.endObject();
  return channel.request(methodConsumerSetProducer, bodyConsumerSetProducer, body, consumer.id);
}

/**
 * Checks once that `worker` switches slots: a worker built without our patch answers the request
 * with "unknown method", and every session on it would fail. Throws an error that says so.
 */
export async function probeSlotSupport(worker: types.Worker): Promise<void> {
  const router = await worker.createRouter({ mediaCodecs: [{ kind: "audio", mimeType: "audio/opus", clockRate: 48000, channels: 2 }] });
  try {
    const direct = await router.createDirectTransport();
    const producer = await direct.produce({
      kind: "audio",
      rtpParameters: { codecs: [{ mimeType: "audio/opus", payloadType: 100, clockRate: 48000, channels: 2 }], encodings: [{ ssrc: 1 }] },
    });
    const consumer = await direct.consume({ producerId: producer.id, rtpCapabilities: router.rtpCapabilities });
    await setSlotProducer(consumer, null).catch((error: unknown) => {
      throw new Error(`this mediasoup worker cannot switch slots (${(error as Error).message}): run ./svc to rebuild media-worker/ with its patches`, {
        cause: error,
      });
    });
  } finally {
    router.close();
  }
}
