/**
 * Runs one command for one REST request through `Engine.execute`, the path RESP commands take, so
 * both interfaces share semantics, WATCH invalidation, keyspace statistics and the append-only
 * file. Each request is a short-lived client: a Session registered for the request's duration,
 * logged in as the user whose credentials it carried (auth.ts), on database 0.
 *
 * A blocking command may wait only when the caller passes `wait` (POST /cmd): the session then
 * gets a Transport, the engine parks it like a RESP client, and the answer comes when the engine
 * serves it, its own timeout passes, or our bound (`--http-block-timeout`) passes first — then it
 * gets the timeout reply, null. Without `wait` the session has no transport and such a command
 * answers at once, as inside MULTI.
 *
 * The answer leaves only once the append-only file's policy covers it, as for a RESP client: the
 * commands are written to the file first, and with `appendfsync always` the answer waits for the
 * fdatasync that covers every write made so far.
 */
import type { AclUser } from "../acl/acl-user.ts";
import type { Engine } from "../server/engine.ts";
import { Session, type Transport } from "../server/session.ts";
import { type Json, JsonReply } from "./json-reply.ts";

/** A command's value, or its error reply; `killed` when CLIENT KILL ended a waiting request. */
export type Outcome = { ok: true; value: Json } | { ok: false; error: string; killed?: true };

export interface Waiting {
  /** Aborts when the HTTP client goes away: the command stops waiting. */
  signal: AbortSignal;
  /** Longest wait, ms; then the command answers as timed out. */
  timeoutMs: number;
  /**
   * Names the request in CLIENT LIST (addr=…), asked only once someone lists it: the name is the
   * request id, and an answer carries its id once it was made (src/http/server.ts).
   */
  peer: () => string;
  /** Called once the command blocks: its connection must stay open, however long it is silent. */
  holdOpen: () => void;
}

export interface RunOptions {
  /** Reply shapes: 3 (maps as objects, doubles as numbers) unless a route needs RESP2's. */
  protocol?: 2 | 3;
  wait?: Waiting;
}

/** What the engine reaches a waiting REST client through: it wakes the request. */
class RestTransport implements Transport {
  onFlush: () => void = () => {};
  onClose: () => void = () => {};

  constructor(
    private readonly name: () => string,
    readonly local: string,
  ) {}

  get peer(): string {
    return this.name();
  }

  flush(): void {
    this.onFlush();
  }

  close(): void {
    this.onClose();
  }
}

export class CommandRunner {
  /** Our REST address "host:port", for CLIENT LIST's laddr; known once the server listens. */
  local = "";

  /** Counts a request's error replies in the server's statistics: one function for every request. */
  private readonly countError = (message: string) => this.engine.stats.errorReplied(message);

  constructor(readonly engine: Engine) {}

  /** Runs `argv` as `user`, whose credentials the request carried (auth.ts). */
  async run(argv: string[], user: AclUser, options: RunOptions = {}): Promise<Outcome> {
    const reply = new JsonReply(options.protocol ?? 3);
    reply.onError = this.countError;
    const transport = options.wait === undefined ? null : new RestTransport(options.wait.peer, this.local);
    const session = new Session(reply, transport);
    this.engine.register(session);
    session.user = user;
    session.authenticated = true;
    try {
      // CLIENT PAUSE holds a request as it holds a connection's command.
      while (this.engine.pauseHolds(session, argv)) await new Promise<void>((resume) => this.engine.clientPause.whenOver(resume));
      this.engine.execute(session, argv, reply);
      this.engine.settleTiming();
      // A script that went busy answers when it ends (scripting/busy-script.ts).
      for (let busy = this.engine.busyScript; busy?.session === session; busy = this.engine.busyScript) {
        await new Promise<void>((ended) => busy!.whenDone(() => ended()));
      }
      if (session.blocked !== null && transport !== null) {
        options.wait!.holdOpen();
        await this.waitUntilServed(session, transport, options.wait!);
      }
    } finally {
      this.engine.unregister(session);
    }
    // The answer waits until the append-only file's policy covers what the command wrote.
    if (this.engine.aof !== null) await this.engine.aof.covered();
    if (reply.failure !== null) return { ok: false, error: reply.failure };
    // Not answered: CLIENT KILL ended the wait, or the HTTP client left (nobody reads this).
    if (!reply.done) return { ok: false, error: "the request was ended by CLIENT KILL", killed: true };
    return { ok: true, value: reply.result };
  }

  /** Resolves once a blocked session is served, times out, is killed, or its client leaves. */
  private waitUntilServed(session: Session, transport: RestTransport, wait: Waiting): Promise<void> {
    const { engine } = this;
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        wait.signal.removeEventListener("abort", leave);
        resolve();
      };
      const stopWaiting = (answerTimeout: boolean) => {
        const state = session.blocked;
        if (state !== null) {
          engine.blocking.unblock(session);
          // What the engine answers a client whose own timeout passed (null; WAIT's 0).
          if (answerTimeout) state.timeout();
        }
        finish();
      };
      const leave = () => stopWaiting(false);
      const timer = setTimeout(() => stopWaiting(true), wait.timeoutMs);
      transport.onFlush = finish;
      transport.onClose = leave;
      wait.signal.addEventListener("abort", leave);
      if (wait.signal.aborted) leave();
    });
  }
}
