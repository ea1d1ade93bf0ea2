/**
 * The common shape of BLPOP, BLMOVE, BZPOPMIN and the other blocking commands: try to serve
 * from the keys at once; if none can, block the client until one of them gets elements or the
 * timeout passes. Inside EXEC (and over REST, which has no connection to wait on) a command that
 * cannot be served answers its timeout reply at once, as Redis does in MULTI.
 */
import { parseTimeout } from "../args.ts";
import type { Reply } from "../reply.ts";
import type { Exec } from "./spec.ts";

export interface BlockingCommand {
  /** The keys to watch, in the order the client named them. */
  keys: string[];
  /** The timeout argument as sent (seconds, a double; 0 waits forever). */
  timeoutText: string;
  /** Serves the client from `key` if it holds elements of the right type; true when it did. */
  serve(x: Exec, key: string): boolean;
  /**
   * The reply when the command cannot block (inside MULTI): a null array for most, a null bulk
   * for BLMOVE. A client that did block and timed out always gets a null array, BLMOVE included,
   * as Redis's replyToBlockedClientTimedOut answers every list and sorted-set command.
   */
  timedOut(reply: Reply): void;
}

export function runBlocking(x: Exec, command: BlockingCommand): void {
  const deadlineMs = parseTimeout(command.timeoutText, x.engine.clock.nowMs());
  for (const key of command.keys) if (command.serve(x, key)) return;
  if (!x.session.mayBlock) return command.timedOut(x.reply);
  const { engine, session } = x;
  const dbIndex = session.dbIndex;
  engine.blocking.block(session, {
    dbIndex,
    keys: command.keys,
    deadlineMs,
    tryServe: (key) => command.serve({ engine, session, reply: session.reply, db: engine.dbs[dbIndex]! }, key),
    timeout: () => {
      session.reply.array(null);
      session.transport?.flush();
    },
  });
}
