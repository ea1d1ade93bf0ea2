/**
 * One receive slot of a session: the client's recvonly m-line `mid`, fed by whichever user the
 * slot chooser puts there. It is one mediasoup consumer on the client's transport, whose SSRC
 * the answer announced; the worker switches it between the producers of its router
 * (worker-slot.ts), keeping that SSRC and continuing its numbering. No packet passes through Bun.
 */
import type { types } from "mediasoup";
import { engineCall } from "./engine-call.ts";
import { setSlotProducer } from "./worker-slot.ts";

export class Slot {
  /** The user feeding this slot, or null when it is free. */
  user: string | null = null;
  /** The producer the worker feeds it from: the user's, as the last switch request named it. */
  producerId: string | null = null;

  constructor(
    readonly mid: string,
    /** The Opus payload type the client offered, which the consumer sends with. */
    readonly payloadType: number,
    readonly consumer: types.Consumer,
  ) {}

  /** The SSRC the client receives this slot on: the consumer's, stable for the session's life. */
  get ssrc(): number {
    return this.consumer.rtpParameters.encodings![0]!.ssrc!;
  }

  /**
   * Feeds the slot from `user`'s producer `producerId` (null, null: frees it). The request is
   * sent now, so requests reach the worker in the order they were made; the promise settles when
   * the worker has switched, after which every packet it forwards on the slot is the new source's.
   * Undefined when nothing changes.
   */
  switchTo(user: string | null, producerId: string | null): Promise<unknown> | undefined {
    this.user = user;
    if (producerId === this.producerId || this.consumer.closed) return undefined;
    this.producerId = producerId;
    return engineCall("switch slot", () => setSlotProducer(this.consumer, producerId));
  }
}
