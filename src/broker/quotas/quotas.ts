/**
 * The quota stage of the request pipeline (spec: Quotas; Authentication 5): each key's produce and
 * consume byte budgets (byte-budget.ts), made on first use from the key's rates. A key without a
 * rate is not limited. Over budget is a 429 whose Retry-After gives whole seconds to wait,
 * rounded up so a client that waits that long is let through.
 */
import type { Clock } from "../../core/clock.ts";
import { SvcError } from "../../core/errors.ts";
import type { ApiKey } from "../auth/keys.ts";
import { ByteBudget } from "./byte-budget.ts";

function overBudget(key: ApiKey, what: "produce" | "consume", rate: number, waitMs: number): SvcError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new SvcError("rate_limited", `key '${key.name}' is over its ${what} quota (${rate} bytes/s); retry in ${seconds} s`, {
    headers: { "retry-after": String(seconds) },
  });
}

export class Quotas {
  private readonly produce = new Map<string, ByteBudget>();
  private readonly consume = new Map<string, ByteBudget>();

  constructor(private readonly clock: Clock) {}

  /**
   * Takes a produce's bytes from the key's budget before anything is written, or refuses it: 429
   * while the budget refills, 413 when the produce is larger than the whole budget (one second
   * of the rate) and so could never pass — a client told to retry would retry forever.
   */
  admitProduce(key: ApiKey, bytes: number): void {
    const budget = this.budget(this.produce, key, key.produce_bytes_per_sec);
    if (budget === null) return;
    if (bytes > budget.rate) {
      throw new SvcError(
        "body_too_large",
        `the produce holds ${bytes} bytes of keys and values; key '${key.name}' may produce ${budget.rate} bytes per second, so a produce may hold at most that: send smaller batches`,
      );
    }
    const waitMs = budget.tryTake(bytes);
    if (waitMs > 0) throw overBudget(key, "produce", budget.rate, waitMs);
  }

  /** Refuses a consume while the key's consume budget is in debt. */
  checkConsume(key: ApiKey): void {
    const budget = this.budget(this.consume, key, key.consume_bytes_per_sec);
    if (budget === null) return;
    const waitMs = budget.debtMs();
    if (waitMs > 0) throw overBudget(key, "consume", budget.rate, waitMs);
  }

  /** Charges a consume's bytes once the read is done; the budget may go into debt. */
  chargeConsume(key: ApiKey, bytes: number): void {
    this.budget(this.consume, key, key.consume_bytes_per_sec)?.charge(bytes);
  }

  /** Drops a revoked key's budgets. */
  forget(keyId: string): void {
    this.produce.delete(keyId);
    this.consume.delete(keyId);
  }

  private budget(budgets: Map<string, ByteBudget>, key: ApiKey, rate: number | null): ByteBudget | null {
    if (rate === null) return null;
    let budget = budgets.get(key.key_id);
    if (budget === undefined) budgets.set(key.key_id, (budget = new ByteBudget(rate, this.clock)));
    return budget;
  }
}
