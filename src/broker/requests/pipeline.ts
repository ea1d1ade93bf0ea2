/**
 * The one path every broker operation takes, whichever front decoded it (HTTP today; the binary
 * protocol, a Kafka listener and Raft followers later): the principal it acts as is judged
 * against the operation's action and topic, then the operation runs. A front only decodes its
 * request into an Operation and encodes what it answers, so authorization — and the stages the
 * next features put here, quotas and metrics — exist once, not once per front.
 */
import type { Action, Authorizer } from "../auth/authorizer.ts";
import type { Principal } from "../auth/principal.ts";

/** An operation as a front hands it over: what it needs a grant for, and the work. */
export interface Operation<T> {
  action: Action;
  /** The topic it acts on; null for the whole broker. */
  topic: string | null;
  /** Runs only once the principal is allowed; its input is decoded inside, after the check. */
  run(): T | Promise<T>;
}

export class RequestPipeline {
  constructor(private readonly authorizer: Authorizer) {}

  /** Runs `operation` as `principal`: refused with the authorizer's 401 or 403, else its answer. */
  async run<T>(principal: Principal, operation: Operation<T>): Promise<T> {
    this.authorizer.check(principal, operation.action, operation.topic);
    return await operation.run();
  }

  /** Whether `principal` may read `topic`: what a list shows it. */
  canRead(principal: Principal, topic: string): boolean {
    return this.authorizer.canRead(principal, topic);
  }
}
