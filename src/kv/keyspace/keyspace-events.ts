/**
 * Keyspace notifications, as Redis sends them: a command that changes a key publishes an event
 * naming what it did ("lpush", "del", "expired", …) on two pub/sub channels,
 *
 *   __keyspace@<db>__:<key>     with the event as the message (class K), and
 *   __keyevent@<db>__:<event>   with the key as the message (class E),
 *
 * keyspace first. CONFIG `notify-keyspace-events` chooses which classes of event are sent: a
 * string of class letters, empty (the default) for none. Every event belongs to one class; the
 * table below says which, and `KeyEvent` is its keys, so an event name the table lacks does not
 * compile.
 *
 * The classes are Redis 7.0's, and so is the way CONFIG GET writes them back: "A" when every
 * class it stands for is on (then, as in Redis, "n" is not written back even when it is on),
 * else each class letter in the order g$lshzxetdn, then K, E and m.
 */
/** Class bits; the letter each has in the CONFIG string is in `classLetters`. */
const keyspace = 1 << 0;
const keyevent = 1 << 1;
const generic = 1 << 2;
const string = 1 << 3;
const list = 1 << 4;
const set = 1 << 5;
const hash = 1 << 6;
const zset = 1 << 7;
const expired = 1 << 8;
const evicted = 1 << 9;
const stream = 1 << 10;
const keyMiss = 1 << 11;
const moduleEvents = 1 << 12;
const newKey = 1 << 13;

/** What "A" stands for: every class of change, not key misses and not new keys. */
const allChanges = generic | string | list | set | hash | zset | expired | evicted | stream | moduleEvents;

/** The type classes in the order CONFIG GET writes them when they are not all on. */
const classLetters: readonly (readonly [string, number])[] = [
  ["g", generic],
  ["$", string],
  ["l", list],
  ["s", set],
  ["h", hash],
  ["z", zset],
  ["x", expired],
  ["e", evicted],
  ["t", stream],
  ["d", moduleEvents],
  ["n", newKey],
];

/** The events svc publishes, and the class of each. */
const eventClasses = {
  // Any type of key.
  del: generic,
  expire: generic,
  persist: generic,
  rename_from: generic,
  rename_to: generic,
  move_from: generic,
  move_to: generic,
  copy_to: generic,
  restore: generic,
  expired,
  evicted,
  new: newKey,
  keymiss: keyMiss,
  // Strings, bitmaps and HyperLogLogs (which are strings).
  set: string,
  setrange: string,
  incrby: string,
  incrbyfloat: string,
  append: string,
  setbit: string,
  pfadd: string,
  // Lists. SORT … STORE leaves a list, so its event is a list's.
  lpush: list,
  rpush: list,
  lpop: list,
  rpop: list,
  linsert: list,
  lset: list,
  lrem: list,
  ltrim: list,
  sortstore: list,
  // Sets.
  sadd: set,
  srem: set,
  spop: set,
  sinterstore: set,
  sunionstore: set,
  sdiffstore: set,
  // Hashes.
  hset: hash,
  hincrby: hash,
  hincrbyfloat: hash,
  hdel: hash,
  // Sorted sets, and geo sets (which are sorted sets).
  zadd: zset,
  zincr: zset,
  zrem: zset,
  zremrangebyscore: zset,
  zremrangebyrank: zset,
  zremrangebylex: zset,
  zpopmin: zset,
  zpopmax: zset,
  zunionstore: zset,
  zinterstore: zset,
  zdiffstore: zset,
  zrangestore: zset,
  georadiusstore: zset,
  geosearchstore: zset,
  // Streams.
  xadd: stream,
  xtrim: stream,
  xdel: stream,
  xsetid: stream,
  "xgroup-create": stream,
  "xgroup-createconsumer": stream,
  "xgroup-delconsumer": stream,
  "xgroup-destroy": stream,
  "xgroup-setid": stream,
} as const satisfies Record<string, number>;

export type KeyEvent = keyof typeof eventClasses;

/** CONFIG SET's complaint about a letter that is no class. */
export const invalidEventClassText = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/** The class bits a CONFIG string turns on; null when a letter is no class. */
export function parseEventClasses(text: string): number | null {
  let flags = 0;
  for (const letter of text) {
    if (letter === "A") flags |= allChanges;
    else if (letter === "K") flags |= keyspace;
    else if (letter === "E") flags |= keyevent;
    else if (letter === "m") flags |= keyMiss;
    else {
      const entry = classLetters.find(([l]) => l === letter);
      if (entry === undefined) return null;
      flags |= entry[1];
    }
  }
  return flags;
}

/** The CONFIG string for class bits, as Redis writes it back. */
export function formatEventClasses(flags: number): string {
  let text = "";
  if ((flags & allChanges) === allChanges) text = "A";
  else for (const [letter, bit] of classLetters) if (flags & bit) text += letter;
  if (flags & keyspace) text += "K";
  if (flags & keyevent) text += "E";
  if (flags & keyMiss) text += "m";
  return text;
}

/** Something that delivers a message to a channel's subscribers (the server's PubSub). */
export interface Publisher {
  publish(channel: string, message: string): number;
}

/**
 * The notifier: knows which classes are on and publishes the events in them. `enabled` is false
 * while nothing would be sent, so a command pays one check per event when notifications are off.
 */
export class KeyspaceEvents {
  private flags = 0;
  enabled = false;

  constructor(private readonly publisher: Publisher) {}

  /** Applies a CONFIG string already checked with parseEventClasses. */
  configure(text: string): void {
    this.flags = parseEventClasses(text) ?? 0;
    // Events go out only if a channel kind is on as well as their class.
    this.enabled = (this.flags & (keyspace | keyevent)) !== 0 && (this.flags & ~(keyspace | keyevent)) !== 0;
  }

  /** Publishes `event` on `key` in database `dbIndex`, if its class is on. */
  notify(dbIndex: number, event: KeyEvent, key: string): void {
    if (!this.enabled || (this.flags & eventClasses[event]) === 0) return;
    if (this.flags & keyspace) this.publisher.publish(`__keyspace@${dbIndex}__:${key}`, event);
    if (this.flags & keyevent) this.publisher.publish(`__keyevent@${dbIndex}__:${event}`, key);
  }
}
