/**
 * Pub/sub: channel, pattern and shard-channel subscriptions, and delivery. A message is appended
 * to each subscriber's output buffer in that subscriber's protocol (a RESP3 push, a RESP2 array),
 * and subscribers are flushed after the publishing command, like every other reply.
 *
 * Shard channels (SSUBSCRIBE, SPUBLISH) are a namespace of their own, as in Redis 7.0 without
 * cluster mode: SPUBLISH reaches only shard subscribers, as `smessage`, and PUBLISH none of them.
 * Their replies count shard subscriptions only; (P)SUBSCRIBE's count channels and patterns.
 */
import { globMatch } from "../text/glob.ts";
import { addToIndex, removeFromIndex, type Session, type SessionIndex, writePush } from "./session.ts";

export type SubscriptionKind = "channel" | "pattern" | "shard";

/** The replies' names for subscribing and unsubscribing, per kind. */
const verbs: Record<SubscriptionKind, [string, string]> = {
  channel: ["subscribe", "unsubscribe"],
  pattern: ["psubscribe", "punsubscribe"],
  shard: ["ssubscribe", "sunsubscribe"],
};

export class PubSub {
  readonly channels: SessionIndex = new Map();
  readonly patterns: SessionIndex = new Map();
  readonly shardChannels: SessionIndex = new Map();

  private index(kind: SubscriptionKind): SessionIndex {
    return kind === "channel" ? this.channels : kind === "pattern" ? this.patterns : this.shardChannels;
  }

  /** Answers as (P|S)SUBSCRIBE does for each name: kind, name, the session's subscription count. */
  subscribe(session: Session, names: readonly string[], kind: SubscriptionKind): void {
    const own = session.subscribedTo(kind);
    for (const name of names) {
      if (!own.has(name)) {
        own.add(name);
        addToIndex(this.index(kind), name, session);
      }
      confirm(session, verbs[kind][0], name, countFor(session, kind));
    }
  }

  /** (P|S)UNSUBSCRIBE: the named subscriptions, or all of that kind when none are named. */
  unsubscribe(session: Session, names: readonly string[], kind: SubscriptionKind): void {
    const own = session.subscribedTo(kind);
    const verb = verbs[kind][1];
    const targets = names.length > 0 ? names : [...own];
    if (targets.length === 0) {
      confirm(session, verb, null, countFor(session, kind));
      return;
    }
    for (const name of targets) {
      if (own.delete(name)) removeFromIndex(this.index(kind), name, session);
      confirm(session, verb, name, countFor(session, kind));
    }
  }

  /** Drops every subscription of a session that is going away, without replies. */
  forget(session: Session): void {
    for (const kind of ["channel", "pattern", "shard"] as const) {
      const own = session.subscribedTo(kind);
      for (const name of own) removeFromIndex(this.index(kind), name, session);
      own.clear();
    }
  }

  /** Delivers a message; returns how many subscriptions received it (PUBLISH's reply). */
  publish(channel: string, message: string): number {
    let receivers = deliver(this.channels.get(channel), ["message", channel, message]);
    for (const [pattern, sessions] of this.patterns) {
      if (globMatch(pattern, channel)) receivers += deliver(sessions, ["pmessage", pattern, channel, message]);
    }
    return receivers;
  }

  /** SPUBLISH: delivers to the shard channel's subscribers; returns how many. */
  publishShard(channel: string, message: string): number {
    return deliver(this.shardChannels.get(channel), ["smessage", channel, message]);
  }
}

/** What a subscription reply counts: shard subscriptions for S*, channels and patterns otherwise. */
const countFor = (session: Session, kind: SubscriptionKind) => (kind === "shard" ? session.shardChannels.size : session.subscriptions);

/** Sends one push of `parts` to each of `sessions`; returns how many. */
function deliver(sessions: Set<Session> | undefined, parts: readonly string[]): number {
  let sent = 0;
  for (const session of sessions ?? []) {
    writePush(session, () => {
      const r = session.reply;
      r.push(parts.length);
      for (const part of parts) r.bulk(part);
    });
    session.transport?.flush();
    sent++;
  }
  return sent;
}

/** A subscription's confirmation: a push, sent even while the client's replies are off (writePush). */
function confirm(session: Session, kind: string, name: string | null, count: number): void {
  writePush(session, () => {
    const reply = session.reply;
    reply.push(3);
    reply.bulk(kind);
    reply.bulk(name);
    reply.integer(count);
  });
}
