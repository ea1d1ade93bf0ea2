/**
 * The one path every broker operation takes, whichever front decoded it (HTTP today; the binary
 * protocol, a Kafka listener and Raft followers later):
 *
 *   credential → principal (authenticate) → grant (authorize) → quota → the operation
 *
 * A front only turns its credential into a principal here, decodes its request into an Operation
 * and encodes what it answers, so authentication, grants and quotas exist once, not once per
 * front. Each operation is counted and timed by its action and outcome (metrics.ts).
 */
import { SvcError } from "../../core/errors.ts";
import type { Action, Authorizer } from "../auth/authorizer.ts";
import type { KeyStore } from "../auth/keys.ts";
import { type Actor, anonymous, keyIdOf, type Principal } from "../auth/principal.ts";
import type { BrokerMetrics } from "../metrics.ts";
import type { Quotas } from "../quotas/quotas.ts";

/**
 * The quota and metrics stages as an operation meets them: bytes and records are known only once
 * its input is decoded or its read is done.
 */
export interface Meter {
  /** Takes a produce's bytes (keys and values) from the produce budget before anything is written; 429 or 413 if it cannot. */
  admitProduce(bytes: number): void;
  /** Counts a produce once written (the records actually written: idempotent duplicates are not). */
  produced(topic: string, records: number, bytes: number): void;
  /** Charges a read's bytes to the consume budget (it may go into debt) and counts it. */
  consumed(topic: string, records: number, bytes: number): void;
}

/** An operation as a front hands it over: what it needs a grant for, and the work. */
export interface Operation<T> {
  action: Action;
  /**
   * The topic it acts on; null for the whole broker — with `admin` that is admin on `*`, with
   * `read` any principal that authenticated (what it may see is filtered, or checked per topic
   * once its input is decoded, with `authorize`).
   */
  topic: string | null;
  /** A read: refused (429) before it runs while the principal's consume budget is in debt. */
  consumes?: boolean;
  /** Runs only once the principal is allowed; its input is decoded inside, after the check. */
  run(meter: Meter): T | Promise<T>;
}

export interface PipelineParts {
  authorizer: Authorizer;
  keys: KeyStore;
  quotas: Quotas;
  metrics: BrokerMetrics;
  /** --auth required: every request needs a key. */
  authRequired: boolean;
  /** False while the data dir recovers and once shutdown begins: operations are refused with 503. */
  isReady: () => boolean;
}

export class RequestPipeline {
  constructor(private readonly parts: PipelineParts) {}

  /**
   * The principal a credential (an API key's secret as the front received it; null when none
   * was sent) acts as: anonymous while authentication is off, else the key — 401 without one or
   * for a secret no live key has.
   */
  authenticate(credential: string | null): Principal {
    if (!this.parts.authRequired) return anonymous;
    if (credential === null) throw new SvcError("unauthorized", "this broker requires an API key: send 'Authorization: Bearer <key>' or 'X-Svc-Key: <key>'");
    const key = this.parts.keys.authenticate(credential);
    if (key === undefined) throw new SvcError("unauthorized", "unknown API key");
    return { kind: "key", keyId: key.key_id };
  }

  /**
   * Runs `operation` as `principal`, counted and timed: refused with 503 while the broker is not
   * ready, with the authorizer's 401 or 403, or with the quota's 429 or 413; else its answer.
   */
  async run<T>(principal: Principal, operation: Operation<T>): Promise<T> {
    const started = performance.now();
    let outcome = "ok";
    try {
      if (!this.parts.isReady()) throw new SvcError("unavailable", "the broker is not ready: it is recovering its data, or shutting down; retry shortly");
      this.parts.authorizer.check(principal, operation.action, operation.topic);
      const key = this.parts.keys.liveKey(principal);
      const { quotas, metrics } = this.parts;
      if (key !== null && operation.consumes === true) quotas.checkConsume(key);
      return await operation.run({
        admitProduce: (bytes) => {
          if (key !== null) quotas.admitProduce(key, bytes);
        },
        produced: (topic, records, bytes) => metrics.produced(topic, records, bytes),
        consumed: (topic, records, bytes) => {
          if (key !== null) quotas.chargeConsume(key, bytes);
          metrics.consumed(topic, records, bytes);
        },
      });
    } catch (error) {
      outcome = error instanceof SvcError ? error.code : "internal";
      throw error;
    } finally {
      this.parts.metrics.request(operation.action, outcome, (performance.now() - started) / 1000);
    }
  }

  /** --auth required: a front that authenticates once per connection asks before it authenticates. */
  get authRequired(): boolean {
    return this.parts.authRequired;
  }

  /**
   * The check a front makes before it decodes a request whose topic it cannot see yet (a
   * compressed binary frame): the principal may take `action` on some topic. The topic's own
   * grant is checked by `run` once decoded.
   */
  authorizeSomewhere(principal: Principal, action: Action): void {
    this.parts.authorizer.checkSomewhere(principal, action);
  }

  /** The check of `run`, for topics an operation learns only from its decoded input (a group join's topics). */
  authorize(principal: Principal, action: Action, topic: string): void {
    this.parts.authorizer.check(principal, action, topic);
  }

  /** Who owns what `principal` creates (groups, producer ids), and whether it may act for any key. */
  actorOf(principal: Principal): Actor {
    return { key: keyIdOf(principal), actsForAnyKey: this.parts.authorizer.isGlobalAdmin(principal) };
  }

  /** Whether `principal` may read `topic`: what a list shows it. */
  canRead(principal: Principal, topic: string): boolean {
    return this.parts.authorizer.canRead(principal, topic);
  }
}
