/**
 * The one path every broker operation takes, whichever front decoded it (HTTP today; the binary
 * protocol, a Kafka listener and Raft followers later): the principal it acts as is judged
 * against the operation's action and topic, then the operation runs. A front only decodes its
 * request into an Operation and encodes what it answers, so authorization — and the stages the
 * next features put here, quotas and metrics — exist once, not once per front.
 */
import type { Action, Authorizer } from "../auth/authorizer.ts";
import { keyIdOf, type Principal } from "../auth/principal.ts";
import type { GroupCaller } from "../groups/coordinator.ts";

/** An operation as a front hands it over: what it needs a grant for, and the work. */
export interface Operation<T> {
  action: Action;
  /**
   * The topic it acts on; null for the whole broker — with `admin` that is admin on `*`, with
   * `read` any principal that authenticated (what it may see is filtered, or checked per topic
   * once its input is decoded, with `authorize`).
   */
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

  /** The check of `run`, for topics an operation learns only from its decoded input (a group join's topics). */
  authorize(principal: Principal, action: Action, topic: string): void {
    this.authorizer.check(principal, action, topic);
  }

  /** Who owns what `principal` creates in a group, and whether it may act for any key. */
  groupCaller(principal: Principal): GroupCaller {
    return { key: keyIdOf(principal), actsForAnyKey: this.authorizer.isGlobalAdmin(principal) };
  }

  /** Whether `principal` may read `topic`: what a list shows it. */
  canRead(principal: Principal, topic: string): boolean {
    return this.authorizer.canRead(principal, topic);
  }
}
