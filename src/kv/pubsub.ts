/**
 * Pub/sub: channel and pattern subscriptions, and delivery. A message is appended to each
 * subscriber's output buffer in that subscriber's protocol (a RESP3 push, a RESP2 array), and
 * subscribers are flushed after the publishing command, like every other reply.
 */
import { globMatch } from "./glob.ts";
import type { Reply } from "./reply.ts";
import { addToIndex, removeFromIndex, type Session, type SessionIndex } from "./session.ts";

export class PubSub {
  readonly channels: SessionIndex = new Map();
  readonly patterns: SessionIndex = new Map();

  /** Answers as (P)SUBSCRIBE does for each name: kind, name, the session's subscription count. */
  subscribe(session: Session, names: readonly string[], pattern: boolean): void {
    for (const name of names) {
      const own = pattern ? session.patterns : session.channels;
      if (!own.has(name)) {
        own.add(name);
        addToIndex(pattern ? this.patterns : this.channels, name, session);
      }
      confirm(session.reply, pattern ? "psubscribe" : "subscribe", name, session.subscriptions);
    }
  }

  /** (P)UNSUBSCRIBE: the named subscriptions, or all of that kind when none are named. */
  unsubscribe(session: Session, names: readonly string[], pattern: boolean): void {
    const own = pattern ? session.patterns : session.channels;
    const kind = pattern ? "punsubscribe" : "unsubscribe";
    const targets = names.length > 0 ? names : [...own];
    if (targets.length === 0) {
      confirm(session.reply, kind, null, session.subscriptions);
      return;
    }
    for (const name of targets) {
      if (own.delete(name)) removeFromIndex(pattern ? this.patterns : this.channels, name, session);
      confirm(session.reply, kind, name, session.subscriptions);
    }
  }

  /** Drops every subscription of a session that is going away, without replies. */
  forget(session: Session): void {
    for (const name of session.channels) removeFromIndex(this.channels, name, session);
    for (const name of session.patterns) removeFromIndex(this.patterns, name, session);
    session.channels.clear();
    session.patterns.clear();
  }

  /** Delivers a message; returns how many subscriptions received it (PUBLISH's reply). */
  publish(channel: string, message: string): number {
    let receivers = 0;
    for (const session of this.channels.get(channel) ?? []) {
      const r = session.reply;
      r.push(3);
      r.bulk("message");
      r.bulk(channel);
      r.bulk(message);
      session.transport?.flush();
      receivers++;
    }
    for (const [pattern, sessions] of this.patterns) {
      if (!globMatch(pattern, channel)) continue;
      for (const session of sessions) {
        const r = session.reply;
        r.push(4);
        r.bulk("pmessage");
        r.bulk(pattern);
        r.bulk(channel);
        r.bulk(message);
        session.transport?.flush();
        receivers++;
      }
    }
    return receivers;
  }
}

function confirm(reply: Reply, kind: string, name: string | null, count: number): void {
  reply.push(3);
  reply.bulk(kind);
  reply.bulk(name);
  reply.integer(count);
}
