/**
 * The common shape of BLPOP, BLMOVE, BZPOPMIN and the other blocking commands: try to serve
 * from the keys at once; if none can, block the client until one of them gets elements or the
 * timeout passes. Inside EXEC (and over REST, which has no connection to wait on) a command that
 * cannot be served answers its timeout reply at once, as Redis does in MULTI.
 *
 * The first attempt looks the keys up as any command does, so a key of another type met before
 * one that serves is WRONGTYPE. A woken client is only served by a value of the type it waits
 * for; a key of another type leaves it waiting, as in Redis, where only a list pushed under the
 * key wakes a list-blocked client.
 */
import type { Server } from "../kit/server.ts";
import type { Session } from "../server/session.ts";
import { parseTimeout } from "./timeout-arg.ts";
import { typeOf } from "../types/value.ts";
import type { Reply } from "./reply.ts";
import type { List } from "../types/list/items.ts";
import type { ZSet } from "../types/zset/zset.ts";
import { getList, getZSet } from "./lookup.ts";
import type { Exec } from "./spec.ts";

/** The types a client can block on, and their values. */
interface Blockable {
  list: List;
  zset: ZSet;
}

export interface BlockingCommand<T extends keyof Blockable> {
  /** The type of value the command takes elements from. */
  type: T;
  /** The keys to watch, in the order the client named them. */
  keys: string[];
  /** A key the command writes besides the one it is served from (BLMOVE's destination). */
  destination?: string;
  /** The timeout argument as sent (seconds, a double; 0 waits forever). */
  timeoutText: string;
  /**
   * Serves the client from `value`, the (non-empty) collection at `key`, and sets `propagate` to
   * the non-blocking command that did the same (the append-only file must not replay a block).
   */
  serve(x: Exec, key: string, value: Blockable[T]): void;
  /**
   * The reply when the command cannot block (inside MULTI): a null array for most, a null bulk
   * for BLMOVE. A client that did block and timed out always gets a null array, BLMOVE included,
   * as Redis's replyToBlockedClientTimedOut answers every list and sorted-set command.
   */
  timedOut(reply: Reply): void;
}

function typedLookup<T extends keyof Blockable>(type: T): (x: Exec, key: string) => Blockable[T] | undefined {
  return (type === "list" ? getList : getZSet) as (x: Exec, key: string) => Blockable[T] | undefined;
}

/**
 * Serves a blocked `session` by `serve`, run as its command would run on database `dbIndex`: a
 * rewrite that has not written `keys` yet writes them first, as they are before the change, and
 * what `serve` changed is recorded in the append-only file (as `propagate`, which it sets). Its
 * lookups are Redis's write lookups: no keyspace hit or miss. For every blocking command: the
 * list and sorted-set pops here, XREADGROUP (commands/stream/read.ts).
 */
export function serveBlocked(engine: Server, session: Session, dbIndex: number, keys: readonly string[], serve: (x: Exec) => void): void {
  const served: Exec = {
    engine,
    session,
    reply: session.reply,
    db: engine.dbs[dbIndex]!,
    timeMs: engine.clock.monotonicMs(),
    countsReads: false,
    propagate: null,
    failed: false,
  };
  const dirtyBefore = engine.dirty;
  engine.rewrite?.beforeServe(dbIndex, keys);
  serve(served);
  if (engine.dirty !== dirtyBefore) engine.propagate(served, []);
}

export function runBlocking<T extends keyof Blockable>(x: Exec, command: BlockingCommand<T>): void {
  const deadlineMs = parseTimeout(command.timeoutText, x.engine.clock.nowMs());
  const lookup = typedLookup(command.type);
  for (const key of command.keys) {
    const value = lookup(x, key);
    if (value !== undefined) return command.serve(x, key, value);
  }
  if (!x.session.mayBlock) return command.timedOut(x.reply);
  const { engine, session } = x;
  const dbIndex = session.dbIndex;
  engine.blocking.block(session, {
    dbIndex,
    keys: command.keys,
    deadlineMs,
    tryServe: (key) => {
      const value = engine.dbs[dbIndex]!.get(key);
      if (value === undefined || typeOf(value) !== command.type) return false;
      serveBlocked(engine, session, dbIndex, [key, ...(command.destination === undefined ? [] : [command.destination])], (x) =>
        command.serve(x, key, value as Blockable[T]),
      );
      return true;
    },
    timeout: () => {
      session.reply.array(null);
      session.transport?.flush();
    },
  });
}
