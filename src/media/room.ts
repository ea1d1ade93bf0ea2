/**
 * A room: the sessions of one room name, who is speaking in it, and which slot each user feeds.
 * It owns the fan-out — a packet from a user goes to every slot that user currently feeds — and
 * re-runs the slot chooser for every session whenever its inputs change: a session joins or
 * leaves, a peer set is replaced, or an audio-level report arrives.
 */
import { isRtp, rtpMarker, rtpSequenceNumber, rtpTimestamp } from "./slots/rtp-header.ts";
import { chooseSlots } from "./slots/slot-chooser.ts";
import type { Session } from "./session.ts";
import type { Slot } from "./slot.ts";

export class Room {
  /** Sessions by user: at most one per user (a second POST replaces the first). */
  readonly sessions = new Map<string, Session>();
  /** Users speaking now, with their level (dBov). */
  readonly #levels = new Map<string, number>();
  /** When each user last spoke (performance.now()): the longest quiet loses a slot first. */
  readonly #lastSpoke = new Map<string, number>();
  /** user → the slots (of other sessions) it feeds right now. */
  #fanOut = new Map<string, Slot[]>();

  constructor(readonly name: string) {}

  get size(): number {
    return this.sessions.size;
  }

  add(session: Session): void {
    this.sessions.set(session.user, session);
    this.reassign();
  }

  /** Removes `session` (if it is still the user's current one) and frees the slots it fed. */
  remove(session: Session): void {
    if (this.sessions.get(session.user) !== session) return;
    this.sessions.delete(session.user);
    this.#levels.delete(session.user);
    this.#lastSpoke.delete(session.user);
    this.reassign();
  }

  setLevel(user: string, level: number | null): void {
    if (level === null) this.#levels.delete(user);
    else {
      this.#levels.set(user, level);
      this.#lastSpoke.set(user, performance.now());
    }
    this.reassign();
  }

  /** Users that have something to send: a session in this room with a live producer. */
  #senders(): string[] {
    return [...this.sessions.values()].filter((s) => s.producer !== undefined && !s.closed).map((s) => s.user);
  }

  /** Re-chooses every session's slots and rebuilds the fan-out table. */
  reassign(): void {
    const senders = this.#senders();
    const fanOut = new Map<string, Slot[]>();
    for (const session of this.sessions.values()) {
      if (session.slots.length === 0) continue;
      const next = chooseSlots({
        slots: session.slots.map((s) => s.user),
        audible: new Set(senders.filter((u) => session.hears(u))),
        levels: this.#levels,
        lastSpoke: this.#lastSpoke,
      });
      session.slots.forEach((slot, i) => {
        slot.assign(next[i]!);
        if (slot.user === null) return;
        const list = fanOut.get(slot.user);
        if (list === undefined) fanOut.set(slot.user, [slot]);
        else list.push(slot);
      });
    }
    this.#fanOut = fanOut;
  }

  /** One packet from `from`'s producer, sent on to every slot it feeds. */
  forward(from: Session, packet: Buffer): void {
    if (this.sessions.get(from.user) !== from) return;
    const slots = this.#fanOut.get(from.user);
    if (slots === undefined || !isRtp(packet)) return;
    // Read before the first slot rewrites the packet in place: every slot renumbers the original numbers.
    const sequenceNumber = rtpSequenceNumber(packet);
    const timestamp = rtpTimestamp(packet);
    const marker = rtpMarker(packet);
    const now = performance.now();
    // The source is the session id, so a user who reconnects is a new source for the rewriter.
    for (const slot of slots) slot.forward(from.id, packet, sequenceNumber, timestamp, marker, now);
  }
}
