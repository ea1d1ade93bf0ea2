/**
 * A room: the sessions of one room name, who is speaking in it, which user each slot carries,
 * and the routers its sessions live in.
 *
 * Placement. A room has one router per worker it uses (room-router.ts). A new session goes to
 * the room's first router with room left (mediaRoomSessionsPerWorkerMax sessions), else to a new
 * router on the least-loaded worker the room does not use yet. A router with no session left is
 * closed.
 *
 * Pipes. When a room spans workers, each sender is piped into every other router of the room
 * (mediasoup's pipeToRouter, keeping the producer's id), so a slot anywhere can be switched to
 * it. A sender is audible to a session once its producer is present in the session's router.
 *
 * Slot choice. The chooser (slots/slot-chooser.ts, pure) runs for every session whenever its
 * inputs change — a session joins or leaves, a peer set is replaced, a pipe opens or closes, an
 * audio-level report arrives — and each slot whose user changed gets one switch request to its
 * worker (slot.ts). No media passes through here.
 */
import type { types } from "mediasoup";
import { SvcError } from "../core/errors.ts";
import { mediaRoomSessionsPerWorkerMax } from "../core/limits.ts";
import type { Logger } from "../core/log.ts";
import { RoomRouter } from "./room-router.ts";
import type { Session } from "./session.ts";
import type { Slot } from "./slot.ts";
import { chooseSlots, rankUsers } from "./slots/slot-chooser.ts";
import type { Worker, WorkerPool } from "./workers.ts";

/** Pipes between routers cross loopback: every worker runs on this machine. */
const pipeListenInfo: types.TransportListenInfo = { protocol: "udp", ip: "127.0.0.1" };

/** The room's router on one worker, while it is being opened and after. */
interface Placement {
  router: Promise<RoomRouter>;
  /** Sessions placed on it, counting those still being built. */
  members: number;
}

export interface RoomOptions {
  workers: WorkerPool;
  log: Logger;
  /** Sessions per worker before the room spreads to another; tests lower it. */
  sessionsPerWorkerMax?: number;
}

export class Room {
  /** Sessions by user: at most one per user (a second POST replaces the first). */
  readonly sessions = new Map<string, Session>();
  /** Users speaking now, with their level (dBov). */
  readonly #levels = new Map<string, number>();
  /** When each user last spoke (performance.now()): the longest quiet loses a slot first. */
  readonly #lastSpoke = new Map<string, number>();
  readonly #placements = new Map<Worker, Placement>();
  /** Routers that are open, in the order they opened. */
  readonly #routers = new Set<RoomRouter>();
  readonly #sessionsPerWorkerMax: number;

  constructor(
    readonly name: string,
    private readonly options: RoomOptions,
  ) {
    this.#sessionsPerWorkerMax = options.sessionsPerWorkerMax ?? mediaRoomSessionsPerWorkerMax;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** True when no session is in the room or being placed in it: the room can be forgotten. */
  get idle(): boolean {
    return [...this.#placements.values()].every((p) => p.members === 0);
  }

  /**
   * A router for a new session, and the function to call once that session is gone (or was never
   * built). Throws 503 when no worker is running or the router cannot be opened.
   */
  async place(): Promise<{ home: RoomRouter; release: () => void }> {
    const worker = this.#chooseWorker();
    if (worker === null) throw new SvcError("unavailable", "media engine is down: no worker is running");
    let placement = this.#placements.get(worker);
    if (placement === undefined) {
      placement = { router: this.#openRouter(worker), members: 0 };
      this.#placements.set(worker, placement);
    }
    placement.members += 1;
    const unhold = this.options.workers.hold(worker);
    const held = placement;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      unhold();
      held.members -= 1;
      if (held.members > 0 || this.#placements.get(worker) !== held) return;
      this.#placements.delete(worker);
      held.router.then(
        (router) => router.close(),
        () => {},
      );
    };
    try {
      return { home: await placement.router, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The worker of the room's first router with room left; else a new one, least loaded first. */
  #chooseWorker(): Worker | null {
    let leastCrowded: Worker | null = null;
    for (const [worker, placement] of this.#placements) {
      if (worker.died || worker.closed) continue;
      if (placement.members < this.#sessionsPerWorkerMax) return worker;
      if (leastCrowded === null || placement.members < this.#placements.get(leastCrowded)!.members) leastCrowded = worker;
    }
    // Every worker full (or all in use): the room's least crowded router takes one more.
    return this.options.workers.leastLoaded(new Set(this.#placements.keys())) ?? leastCrowded;
  }

  #openRouter(worker: Worker): Promise<RoomRouter> {
    const opening = RoomRouter.open(worker);
    opening.then(
      (router) => this.#joined(worker, router),
      () => {
        if (this.#placements.get(worker)?.router === opening) this.#placements.delete(worker);
      },
    );
    return opening;
  }

  /** A router of the room is open: it hears the room's senders elsewhere, and reports levels. */
  #joined(worker: Worker, router: RoomRouter): void {
    this.#routers.add(router);
    router.router.observer.once("close", () => {
      this.#routers.delete(router);
      const placement = this.#placements.get(worker);
      placement?.router.then((current) => {
        if (current === router && this.#placements.get(worker) === placement) this.#placements.delete(worker);
      });
    });
    router.observer.on("volumes", (volumes) => this.#levelReport(router, volumes));
    router.observer.on("silence", () => this.#levelReport(router, []));
    for (const session of this.sessions.values()) if (session.home !== router) this.#pipe(session, router);
  }

  add(session: Session): void {
    this.sessions.set(session.user, session);
    const { producer, home } = session;
    if (producer !== undefined) {
      home.producerIds.add(producer.id);
      producer.observer.once("close", () => home.producerIds.delete(producer.id));
      for (const router of this.#routers) if (router !== home) this.#pipe(session, router);
    }
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

  /** Makes `session`'s producer present in `to`, another router of the room. */
  #pipe(session: Session, to: RoomRouter): void {
    const producer = session.producer;
    if (producer === undefined || producer.closed || to.closed) return;
    session.home.router
      .pipeToRouter({ producerId: producer.id, router: to.router, listenInfo: pipeListenInfo, enableSctp: false })
      .then(({ pipeProducer }) => {
        if (pipeProducer === undefined || pipeProducer.closed) return;
        to.producerIds.add(producer.id);
        pipeProducer.observer.once("close", () => {
          to.producerIds.delete(producer.id);
          this.reassign();
        });
        this.reassign();
      })
      .catch((error: unknown) => {
        // A sender that left, or a router that closed, while the pipe was being made: nothing to hear.
        if (producer.closed || to.closed || session.home.closed) return;
        this.options.log.warn({ room: this.name, user: session.user, err: error }, "could not pipe a sender to the room's other worker");
      });
  }

  /** One audio-level report of `router`'s own senders: those absent from it are silent. */
  #levelReport(router: RoomRouter, volumes: types.AudioLevelObserverVolume[]): void {
    const levels = new Map(volumes.map((v) => [v.producer.id, v.volume]));
    const now = performance.now();
    for (const session of this.sessions.values()) {
      if (session.home !== router || session.producer === undefined) continue;
      const level = levels.get(session.producer.id);
      if (level === undefined) this.#levels.delete(session.user);
      else {
        this.#levels.set(session.user, level);
        this.#lastSpoke.set(session.user, now);
      }
    }
    this.reassign();
  }

  /**
   * Re-chooses every session's slots and sends a switch for each slot whose user changed. The
   * promise settles when the workers have made every switch (PATCH answers after it).
   */
  reassign(): Promise<void> {
    /** user → the producer it sends with, for every session that sends. */
    const sources = new Map<string, string>();
    for (const session of this.sessions.values()) {
      if (session.producer !== undefined && !session.producer.closed && !session.closed) sources.set(session.user, session.producer.id);
    }
    const priorities = { levels: this.#levels, lastSpoke: this.#lastSpoke };
    // Ranked once for the room: each session's choice then walks it only as far as it needs.
    const ranking = rankUsers(sources.keys(), priorities);
    const switches: Promise<unknown>[] = [];
    for (const session of this.sessions.values()) {
      if (session.slots.length === 0 || session.closed) continue;
      const present = session.home.producerIds;
      const audible = { has: (user: string) => session.hears(user) && present.has(sources.get(user) ?? "") };
      const next = chooseSlots({ slots: session.slots.map((s) => s.user), audible, ranking, ...priorities });
      session.slots.forEach((slot, i) => {
        const user = next[i]!;
        const producerId = user === null ? null : sources.get(user)!;
        const switched = slot.switchTo(user, producerId);
        if (switched !== undefined) switches.push(switched.catch((error: unknown) => this.#switchFailed(session, slot, producerId, error)));
      });
    }
    return Promise.all(switches).then(() => undefined);
  }

  /**
   * A switch the worker refused (the producer closed in between: a pipe's close reaches us after
   * the request left) changed nothing there. The slot is freed, so the worker and we agree; the
   * close that caused it re-runs the choice.
   */
  #switchFailed(session: Session, slot: Slot, producerId: string | null, error: unknown): void {
    // A later switch of the slot was sent after this one: the worker follows that one.
    if (session.closed || slot.consumer.closed || slot.producerId !== producerId) return;
    this.options.log.debug({ room: this.name, user: session.user, slot: slot.mid, err: error }, "slot switch refused by the worker; slot freed");
    slot.switchTo(null, null)?.catch(() => {});
  }
}
