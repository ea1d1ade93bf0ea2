/**
 * The media service's state and the operations of spec part A: sessions by id, rooms (each holds
 * its sessions by user, so a room and a user name one session), and the worker pool under them.
 * HTTP routes (http/routes.ts) check the token and the body's shape and then call one method here;
 * every rule about ownership, replacement and peers lives here.
 */
import type { types } from "mediasoup";
import { SvcError } from "../core/errors.ts";
import { sessionPeersMax } from "../core/limits.ts";
import type { Logger } from "../core/log.ts";
import { Room } from "./room.ts";
import type { ParsedOffer } from "./sdp/offer.ts";
import { type ListenConfig, Session, type SessionArgs, type SessionEvents } from "./session.ts";
import { isValidId, type TokenClaims } from "./token.ts";
import type { WorkerPool } from "./workers.ts";

/**
 * A request's peers: an array of user ids, or null for the whole room (absent is null too).
 * More than sessionPeersMax entries, or an entry that is not a user id, is a 400 naming it.
 */
export function parsePeers(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new SvcError("bad_request", "peers must be an array of user ids, or null for the whole room");
  if (value.length > sessionPeersMax) {
    throw new SvcError("bad_request", `peers has ${value.length} entries; at most ${sessionPeersMax}`);
  }
  value.forEach((peer, i) => {
    if (!isValidId(peer)) throw new SvcError("bad_request", `peers[${i}] must be a non-empty string of at most 256 bytes`);
  });
  return value as string[];
}

export class MediaServer {
  readonly #byId = new Map<number, Session>();
  readonly #rooms = new Map<string, Room>();
  #nextId = 1;
  readonly #events: SessionEvents;

  constructor(
    readonly workers: WorkerPool,
    private readonly listen: ListenConfig,
    private readonly log: Logger,
  ) {
    this.#events = {
      onPacket: (session, packet) => this.#rooms.get(session.room)?.forward(session, packet),
      onLevel: (session, level) => {
        if (this.#byId.get(session.id) === session) this.#rooms.get(session.room)?.setLevel(session.user, level);
      },
      onEngineLost: (session) => {
        this.log.warn({ session: session.id, user: session.user, room: session.room }, "session lost with its media worker");
        this.#forget(session);
      },
    };
  }

  get sessionCount(): number {
    return this.#byId.size;
  }

  roomSize(room: string): number {
    return this.#rooms.get(room)?.size ?? 0;
  }

  /** POST /v1/sessions: a new session for the token's (user, room), replacing an earlier one. */
  async create(claims: TokenClaims, offer: ParsedOffer, peers: string[] | null): Promise<{ session_id: number; sdp_answer: string }> {
    const { session, answer } = await this.#open(claims, offer, peers, (args) => Session.create({ ...args, listen: this.listen }));
    return { session_id: session.id, sdp_answer: answer };
  }

  /**
   * A session whose client speaks plain RTP on a transport `openTransport` makes, registered like
   * any other. Only bench/media.ts uses it: its load generator speaks no WebRTC.
   */
  async createPlain(claims: TokenClaims, offer: ParsedOffer, openTransport: (router: types.Router) => Promise<types.PlainTransport>): Promise<Session> {
    const { session } = await this.#open(claims, offer, null, async (args) => ({ session: await Session.build(args, openTransport), answer: "" }));
    return session;
  }

  /** Builds a session on the least-loaded worker with `build` and makes it the (user, room)'s one. */
  async #open(
    claims: TokenClaims,
    offer: ParsedOffer,
    peers: string[] | null,
    build: (args: SessionArgs) => Promise<{ session: Session; answer: string }>,
  ): Promise<{ session: Session; answer: string }> {
    const worker = this.workers.leastLoaded();
    if (worker === null) throw new SvcError("unavailable", "media engine is down: no worker is running");
    const release = this.workers.hold(worker);
    const id = this.#nextId++;
    let created: { session: Session; answer: string };
    try {
      created = await build({ id, user: claims.user, room: claims.room, offer, peers, worker, events: this.#events });
    } catch (error) {
      release();
      throw error;
    }
    const { session } = created;
    session.router.observer.once("close", release);
    // Rule 2: at most one session per user and room; the newest wins, even when two raced.
    const earlier = this.#rooms.get(session.room)?.sessions.get(session.user);
    if (earlier !== undefined) this.#close(earlier);
    this.#byId.set(id, session);
    let room = this.#rooms.get(session.room);
    if (room === undefined) this.#rooms.set(session.room, (room = new Room(session.room)));
    room.add(session);
    this.log.info(
      { session: id, user: session.user, room: session.room, slots: session.slots.length, sends: session.producer !== undefined, replaced: earlier?.id },
      "session created",
    );
    return created;
  }

  /** The session `id` when it belongs to the token's user and room; 404 otherwise (rule 1). */
  owned(claims: TokenClaims, id: number): Session {
    const session = this.#byId.get(id);
    if (session === undefined || session.user !== claims.user || session.room !== claims.room) {
      throw new SvcError("not_found", `no session ${id} for this token's user and room`);
    }
    return session;
  }

  /** PATCH: the peer set replaces the earlier one; slots of users who left it are freed now. */
  setPeers(session: Session, peers: string[] | null): void {
    session.peers = peers === null ? null : new Set(peers);
    this.#rooms.get(session.room)?.reassign();
  }

  delete(session: Session): void {
    this.#close(session);
    this.log.info({ session: session.id, user: session.user, room: session.room }, "session deleted");
  }

  #close(session: Session): void {
    this.#forget(session);
    session.close();
  }

  #forget(session: Session): void {
    if (this.#byId.get(session.id) !== session) return;
    this.#byId.delete(session.id);
    const room = this.#rooms.get(session.room);
    room?.remove(session);
    if (room !== undefined && room.size === 0) this.#rooms.delete(session.room);
  }

  close(): void {
    for (const session of [...this.#byId.values()]) this.#close(session);
    this.workers.close();
  }
}
