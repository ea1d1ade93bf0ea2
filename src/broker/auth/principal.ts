/**
 * Who a request acts as, whichever front it came in by. With authentication off (the default:
 * the spec's `--auth` is off unless `required`) everyone is `anonymous`, whom every grant covers;
 * with keys a request acts as the key it presented, named by its id — the key's grants are read
 * from the key store at each check, so a revoked key stops at once.
 */
export type Principal = { kind: "anonymous" } | { kind: "key"; keyId: string };

export const anonymous: Principal = { kind: "anonymous" };

/** The key a principal acts as; null for anonymous (authentication off). */
export function keyIdOf(principal: Principal): string | null {
  return principal.kind === "key" ? principal.keyId : null;
}

/**
 * A principal as ownership sees it (groups, members, producer ids belong to keys): the key that
 * would own what it creates — null while authentication is off, where everyone is the same
 * nobody — and whether it may act for any key (a global admin).
 */
export interface Actor {
  key: string | null;
  actsForAnyKey: boolean;
}
