/**
 * Client-side caching (CLIENT TRACKING), as Redis 7.0 serves it: a client that caches values tells
 * the server so, and the server tells it when a key it may hold changes ("invalidate").
 *
 * Two modes, chosen per client:
 * - default: the keys a tracking client reads (its read-only commands' keys, found or not) are
 *   remembered in one table, key → the clients that read it. The first change to the key sends
 *   each of them `invalidate [key]` and forgets the key, until one of them reads it again. With
 *   OPTIN a client's reads are remembered only right after CLIENT CACHING YES; with OPTOUT,
 *   except right after CLIENT CACHING NO.
 * - BCAST: nothing is remembered; every changed key that starts with one of the client's
 *   prefixes ("" for all) is sent to it, gathered once per turn of the event loop into one
 *   message per prefix, the keys in byte order (Redis gathers them until it next sleeps).
 *
 * Keys are names alone, as in Redis: a change in any database invalidates the name. NOLOOP
 * leaves out the changes a client made itself. A change a client makes to a key it tracks is
 * told after the command's reply (after EXEC's, for a transaction's). FLUSHALL and FLUSHDB send
 * every tracking client `invalidate` with a null, and forget every key.
 *
 * Messages go to a RESP3 client as pushes. REDIRECT sends them to another client instead; a
 * RESP2 client takes them as pub/sub messages on `__redis__:invalidate` while it is subscribed to
 * anything. A redirect target that has gone makes the client's messages `tracking-redir-broken`.
 *
 * tracking-table-max-keys bounds the table: past it, the keys remembered longest ago are
 * invalidated and forgotten (Redis picks random ones; oldest first is deterministic and keeps
 * the keys most recently read) — after the read that grew it, and by the cron, so that a bound
 * lowered by CONFIG SET holds on an idle server too, as Redis's serverCron makes it.
 */
import type { Reply } from "../kit/reply.ts";
import type { Session } from "./session.ts";

/** The pub/sub channel a RESP2 redirect target receives invalidations on. */
export const invalidateChannel = "__redis__:invalidate";

/** One client's CLIENT TRACKING state; the session holds it while tracking is on. */
export interface ClientTracking {
  /** The client messages go to (CLIENT ID); 0 for the client itself. */
  redirect: number;
  bcast: boolean;
  optin: boolean;
  optout: boolean;
  noloop: boolean;
  /** CLIENT CACHING was given for the next command (or the transaction being queued). */
  caching: boolean;
  /** The redirect target was found gone (CLIENT TRACKINGINFO's broken_redirect). */
  brokenRedirect: boolean;
  /** BCAST prefixes, in the order given ("" when none was). */
  readonly prefixes: string[];
}

/** A BCAST prefix: its clients, and the keys changed since the last broadcast with who changed each first. */
interface Prefix {
  readonly clients: Set<Session>;
  readonly changed: Map<string, Session | null>;
}

/** Finds a client by CLIENT ID (the engine's session table). */
export type SessionLookup = (id: number) => Session | undefined;

export class Tracking {
  /** Default mode: key → the IDs of the clients that read it. */
  private readonly table = new Map<string, Set<number>>();
  /** Client IDs summed over the table's keys (INFO tracking_total_items). */
  totalItems = 0;
  private readonly prefixes = new Map<string, Prefix>();
  /** Clients with tracking on (INFO tracking_clients). */
  clients = 0;
  /** tracking-table-max-keys; 0 for no bound. */
  keysMax = 1_000_000;
  /** Invalidations of keys the running command's own client tracks, sent after its reply. */
  private readonly pending: (string | null)[] = [];
  private broadcastQueued = false;

  constructor(
    private readonly sessionById: SessionLookup,
    /** Runs `send` once the current turn's commands have run (end-of-turn.ts). */
    private readonly atTurnEnd: (send: () => void) => void,
  ) {}

  get keys(): number {
    return this.table.size;
  }

  /** Whether a change to a key may need telling anyone: keys remembered or prefixes subscribed. */
  get active(): boolean {
    return this.table.size > 0 || this.prefixes.size > 0;
  }

  get prefixCount(): number {
    return this.prefixes.size;
  }

  /** CLIENT TRACKING ON, its options already checked against the client's state. */
  enable(session: Session, options: Omit<ClientTracking, "caching" | "brokenRedirect" | "prefixes">, prefixes: readonly string[]): void {
    if (session.tracking === null) this.clients++;
    // Turning it on again keeps the prefixes already given, as Redis does, and adds these.
    const state: ClientTracking = { ...options, caching: false, brokenRedirect: false, prefixes: session.tracking?.prefixes ?? [] };
    session.tracking = state;
    if (!options.bcast) return;
    for (const prefix of prefixes.length === 0 ? [""] : prefixes) {
      if (!state.prefixes.includes(prefix)) state.prefixes.push(prefix);
      let entry = this.prefixes.get(prefix);
      if (entry === undefined) {
        entry = { clients: new Set(), changed: new Map() };
        this.prefixes.set(prefix, entry);
      }
      entry.clients.add(session);
    }
  }

  /** CLIENT TRACKING OFF, RESET, or the client leaving. The table keeps its ID until the keys change. */
  disable(session: Session): void {
    const state = session.tracking;
    if (state === null) return;
    for (const prefix of state.bcast ? state.prefixes : []) {
      const entry = this.prefixes.get(prefix)!;
      entry.clients.delete(session);
      if (entry.clients.size === 0) this.prefixes.delete(prefix);
    }
    session.tracking = null;
    this.clients--;
  }

  /** After a read-only command of a tracking client in default mode: remembers its keys. */
  remember(session: Session, keys: readonly string[]): void {
    const state = session.tracking!;
    if (state.optin ? !state.caching : state.optout && state.caching) return;
    for (const key of keys) {
      let ids = this.table.get(key);
      if (ids === undefined) {
        ids = new Set();
        this.table.set(key, ids);
      }
      if (!ids.has(session.id)) {
        ids.add(session.id);
        this.totalItems++;
      }
    }
    this.bound(session);
  }

  /**
   * Past tracking-table-max-keys, the oldest keys are told and forgotten (no change to
   * broadcast). `current`: the client whose command is running, told after its reply; null
   * from the cron.
   */
  bound(current: Session | null): void {
    if (this.keysMax === 0 || this.table.size <= this.keysMax) return;
    for (const key of this.table.keys()) {
      if (this.table.size <= this.keysMax) return;
      this.forget(key, current);
    }
  }

  /**
   * `key` changed, by the command `by` is running (null: the server's own expiry): tells the
   * clients that read it, and notes it for the BCAST prefixes it starts with. `noClient`: for
   * BCAST's NOLOOP the change is no client's own — a script's, which Redis makes as its script
   * client, or a deletion because the key's time had passed.
   */
  invalidate(key: string, by: Session | null, noClient = false): void {
    for (const [prefix, entry] of this.prefixes) {
      if (!key.startsWith(prefix)) continue;
      // The last to change it before the broadcast is the one NOLOOP leaves it out for: Redis
      // overwrites the key's client in its radix tree at each change.
      entry.changed.set(key, noClient ? null : by);
      this.queueBroadcast();
    }
    this.forget(key, by);
  }

  /** Tells the clients that read `key` to drop it, and forgets who read it. */
  private forget(key: string, by: Session | null): void {
    const ids = this.table.get(key);
    if (ids === undefined) return;
    this.table.delete(key);
    this.totalItems -= ids.size;
    for (const id of ids) {
      const target = this.sessionById(id);
      // Tracking since turned off, or switched to BCAST: what it read before is not told.
      if (target === undefined || target.tracking === null || target.tracking.bcast) continue;
      if (target === by) {
        if (!target.tracking.noloop) this.pending.push(key);
      } else this.send(target, [key]);
    }
  }

  /** FLUSHALL or FLUSHDB: every tracking client is told everything may have changed. */
  flushed(by: Session | null, sessions: Iterable<Session>): void {
    for (const session of sessions) {
      if (session.tracking === null) continue;
      if (session === by) this.pending.push(null);
      else this.send(session, null);
    }
    this.table.clear();
    this.totalItems = 0;
  }

  /**
   * Runs `serve`, a blocked client's command served inside another client's: what `session`
   * changes of its own keys is told after its reply; the outer command's own stay pending.
   */
  servingAs<T>(session: Session, serve: () => T): T {
    const outer = this.pending.splice(0);
    try {
      return serve();
    } finally {
      this.afterCommand(session);
      this.pending.push(...outer);
    }
  }

  /** After a client's command has answered: its own keys' invalidations, in the order they changed. */
  afterCommand(session: Session): void {
    if (this.pending.length === 0) return;
    const keys = this.pending.splice(0);
    for (const key of keys) if (session.tracking !== null) this.send(session, key === null ? null : [key]);
  }

  private queueBroadcast(): void {
    if (this.broadcastQueued) return;
    this.broadcastQueued = true;
    this.atTurnEnd(() => {
      this.broadcastQueued = false;
      this.broadcast();
    });
  }

  /** Sends each BCAST prefix's changed keys to its clients, one message per prefix, prefixes in byte order. */
  private broadcast(): void {
    const ordered = [...this.prefixes.keys()].sort();
    for (const prefix of ordered) {
      const entry = this.prefixes.get(prefix)!;
      if (entry.changed.size === 0) continue;
      const changed = [...entry.changed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      entry.changed.clear();
      const all = changed.map(([key]) => key);
      for (const client of entry.clients) {
        const keys = client.tracking?.noloop ? changed.filter(([, by]) => by !== client).map(([key]) => key) : all;
        if (keys.length > 0) this.send(client, keys);
      }
    }
  }

  /** One invalidation message for `session`'s cache: `keys`, or null for everything. */
  private send(session: Session, keys: readonly string[] | null): void {
    const state = session.tracking!;
    let target = session;
    if (state.redirect !== 0) {
      const found = this.sessionById(state.redirect);
      if (found === undefined) {
        state.brokenRedirect = true;
        if (session.reply.protocol === 3) {
          session.reply.push(2);
          session.reply.bulk("tracking-redir-broken");
          session.reply.integer(state.redirect);
          session.transport?.flush();
        }
        return;
      }
      target = found;
    }
    const r = target.reply;
    if (r.protocol === 3) {
      r.push(2);
      r.bulk("invalidate");
    } else if (state.redirect !== 0 && target.subscribed) {
      r.array(3);
      r.bulk("message");
      r.bulk(invalidateChannel);
    } else return; // A RESP2 connection cannot take a message between its replies.
    // "Everything" is a null in the tracking client's protocol, as Redis 7.0 writes it: a RESP2
    // client's redirect target gets RESP2's null bulk even in a RESP3 push. Only the reverse is
    // not followed: a RESP2 subscriber gets RESP2's null, where Redis writes a "_" it cannot parse.
    if (keys === null) writeNull(r, session.reply.protocol === 3 && r.protocol === 3 ? 3 : 2);
    else writeKeys(r, keys);
    target.transport?.flush();
  }
}

/** A null as `protocol` writes it, whichever protocol `r`'s client speaks. */
function writeNull(r: Reply, protocol: 2 | 3): void {
  const own = r.protocol;
  r.protocol = protocol;
  r.bulk(null);
  r.protocol = own;
}

function writeKeys(r: Reply, keys: readonly string[]): void {
  r.array(keys.length);
  for (const key of keys) r.bulk(key);
}
