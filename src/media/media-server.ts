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
import { type ListenConfig, Session, type SessionArgs } from "./session.ts";
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

export interface MediaServerOptions {
  /** Sessions of one room per worker before the room spreads to another (tests lower it). */
  roomSessionsPerWorkerMax?: number;
}

export class MediaServer {
  readonly #byId = new Map<number, Session>();
  readonly #rooms = new Map<string, Room>();
  #nextId = 1;

  constructor(
    readonly workers: WorkerPool,
    private readonly listen: ListenConfig,
    private readonly log: Logger,
    private readonly options: MediaServerOptions = {},
  ) {}

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

  /** Places a session in its room, builds it there with `build` and makes it the (user, room)'s one. */
  async #open(
    claims: TokenClaims,
    offer: ParsedOffer,
    peers: string[] | null,
    build: (args: SessionArgs) => Promise<{ session: Session; answer: string }>,
  ): Promise<{ session: Session; answer: string }> {
    let room = this.#rooms.get(claims.room);
    if (room === undefined) {
      room = new Room(claims.room, { workers: this.workers, log: this.log, sessionsPerWorkerMax: this.options.roomSessionsPerWorkerMax });
      this.#rooms.set(claims.room, room);
    }
    const id = this.#nextId++;
    let created: { session: Session; answer: string };
    let release = () => {};
    try {
      const placed = await room.place();
      release = placed.release;
      created = await build({
        id,
        user: claims.user,
        room: claims.room,
        offer,
        peers,
        home: placed.home,
        onEngineLost: (session) => {
          this.log.warn({ session: session.id, user: session.user, room: session.room }, "session lost with its media worker");
          this.#forget(session);
        },
      });
    } catch (error) {
      release();
      this.#forgetIfIdle(room);
      throw error;
    }
    const { session } = created;
    session.onTransportClose(() => {
      release();
      this.#forgetIfIdle(room);
    });
    // Rule 2: at most one session per user and room; the newest wins, even when two raced.
    const earlier = room.sessions.get(session.user);
    if (earlier !== undefined) this.#close(earlier);
    this.#byId.set(id, session);
    room.add(session);
    this.log.info(
      {
        session: id,
        user: session.user,
        room: session.room,
        workerPid: session.home.worker.pid,
        slots: session.slots.length,
        sends: session.producer !== undefined,
        replaced: earlier?.id,
      },
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

  /**
   * PATCH: the peer set replaces the earlier one. Resolves once the workers have switched every
   * slot it changed, so from the next packet on the session hears exactly its new peers.
   */
  async setPeers(session: Session, peers: string[] | null): Promise<void> {
    session.peers = peers === null ? null : new Set(peers);
    await this.#rooms.get(session.room)?.reassign();
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
    if (room !== undefined) this.#forgetIfIdle(room);
  }

  /** Drops a room with no session in it or being placed in it (its routers close with their last session). */
  #forgetIfIdle(room: Room): void {
    if (room.size === 0 && room.idle && this.#rooms.get(room.name) === room) this.#rooms.delete(room.name);
  }

  close(): void {
    for (const session of [...this.#byId.values()]) this.#close(session);
    this.workers.close();
  }
}
