/**
 * The TypeScript reference of a worker slot's outgoing RTP numbering (media-worker/patches/0001;
 * test/media/worker-slot.test.ts checks the worker against it). Until the worker switched slots
 * itself, svc relayed every slot packet through Bun and renumbered it here.
 *
 * A slot is a fixed SSRC the client receives on; the user feeding it changes. Receivers
 * (browsers' jitter buffers, werift) treat a jump in sequence number as loss and a jump back as a
 * stale duplicate, so on every change of source the new source's numbers are shifted to continue
 * where the slot left off: the next sequence number, and a timestamp advanced by the wall time
 * that passed (at least one frame), as Jitsi's SsrcCache and Janus's VideoRoom `switch` do.
 * Within one source, gaps and reordering pass through unchanged.
 *
 * Pure state machine: the caller supplies the clock, so tests replay exactly. It runs once per
 * forwarded packet, so it allocates nothing: a source is a number (the slot passes the sending
 * session's id), and a packet's outgoing numbers are read from the rewriter right after rewrite().
 */

const seqModulo = 0x1_0000;
const tsModulo = 0x1_0000_0000;
/**
 * Packets after a change of source during which one numbered before the change is dropped. A
 * packet the new source sent before its turn arrives within a few packets of the change, if at
 * all; past this window the comparison would misfire once the source had sent half the sequence
 * space (32,768 packets, ~11 minutes of Opus) and drop everything for as long again.
 */
const staleGuardPackets = 1_000;

/** a is newer than b in RFC 3550 serial-number order (16-bit sequence numbers). */
export function seqNewer(a: number, b: number): boolean {
  const diff = (a - b + seqModulo) % seqModulo;
  return diff !== 0 && diff < seqModulo / 2;
}

export interface RtpRewriterOptions {
  /** RTP clock rate of the codec (48000 for Opus). */
  clockRate: number;
  /** Shortest timestamp advance across a change of source, in ticks (one 20 ms Opus frame: 960). */
  frameTicks: number;
  /** First outgoing sequence number and timestamp (random in production, per RFC 3550). */
  initialSequenceNumber: number;
  initialTimestamp: number;
}

export class RtpRewriter {
  #source: number | null = null;
  #seqOffset = 0;
  #tsOffset = 0;
  /** Outgoing sequence number of the first packet of the current source; older ones are dropped while guarding. */
  #sourceFirstSeq = 0;
  /** Whether the current source is still within staleGuardPackets of its first packet. */
  #guarding = false;
  #started = false;
  #lastSeq = 0;
  #lastTs = 0;
  #lastAtMs = 0;
  #sequenceNumber = 0;
  #timestamp = 0;
  #marker = false;

  constructor(private readonly options: RtpRewriterOptions) {}

  /** The source currently feeding the slot, or null. */
  get source(): number | null {
    return this.#source;
  }

  /** Outgoing sequence number of the last packet rewrite() let through. */
  get sequenceNumber(): number {
    return this.#sequenceNumber;
  }

  /** Outgoing timestamp of the last packet rewrite() let through. */
  get timestamp(): number {
    return this.#timestamp;
  }

  /** Whether the last packet rewrite() let through was the first after a change of source: RTP's "start of a talkspurt". */
  get marker(): boolean {
    return this.#marker;
  }

  /** The slot stops being fed; whoever comes next (even the same user) starts a new run. */
  release(): void {
    this.#source = null;
  }

  /**
   * Renumbers one packet from `source`: true with its outgoing numbers in sequenceNumber,
   * timestamp and marker, or false when the packet must be dropped: it predates the moment this
   * source took the slot (and arrives within staleGuardPackets of it), so its number would
   * collide with the previous source's packets.
   */
  rewrite(source: number, sequenceNumber: number, timestamp: number, nowMs: number): boolean {
    let marker = false;
    if (source !== this.#source) {
      this.#switchTo(source, sequenceNumber, timestamp, nowMs);
      marker = true;
    }
    const seq = (sequenceNumber + this.#seqOffset) % seqModulo;
    const ts = (timestamp + this.#tsOffset) % tsModulo;
    if (!marker && this.#guarding) {
      if (seqNewer(this.#sourceFirstSeq, seq)) return false;
      if ((seq - this.#sourceFirstSeq + seqModulo) % seqModulo >= staleGuardPackets) this.#guarding = false;
    }
    if (!this.#started || seqNewer(seq, this.#lastSeq)) {
      this.#started = true;
      this.#lastSeq = seq;
      this.#lastTs = ts;
      this.#lastAtMs = nowMs;
    }
    this.#sequenceNumber = seq;
    this.#timestamp = ts;
    this.#marker = marker;
    return true;
  }

  #switchTo(source: number, sequenceNumber: number, timestamp: number, nowMs: number): void {
    let nextSeq = this.options.initialSequenceNumber;
    let nextTs = this.options.initialTimestamp;
    if (this.#started) {
      const elapsedTicks = Math.round((Math.max(0, nowMs - this.#lastAtMs) * this.options.clockRate) / 1000);
      nextSeq = (this.#lastSeq + 1) % seqModulo;
      nextTs = (this.#lastTs + Math.max(this.options.frameTicks, elapsedTicks)) % tsModulo;
    }
    this.#source = source;
    this.#seqOffset = (nextSeq - sequenceNumber + seqModulo) % seqModulo;
    this.#tsOffset = (nextTs - timestamp + tsModulo) % tsModulo;
    this.#sourceFirstSeq = nextSeq;
    this.#guarding = true;
  }
}
