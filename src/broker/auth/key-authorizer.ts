/**
 * The authorizer of a broker with API keys: a key's grants (grants.ts) judged against an action
 * on a topic, read from the key store at every check — so a key revoked a moment ago is refused
 * (401) by the next request, whichever front it came by. `anonymous` exists only while
 * authentication is off, and every grant covers it.
 */
import { SvcError } from "../../core/errors.ts";
import type { Action, Authorizer } from "./authorizer.ts";
import { actionCovers, grantsAllow, isGlobalAdminGrants } from "./grants.ts";
import type { KeyStore } from "./keys.ts";
import type { Principal } from "./principal.ts";

export class KeyAuthorizer implements Authorizer {
  constructor(private readonly keys: KeyStore) {}

  check(principal: Principal, action: Action, topic: string | null): void {
    const key = this.keys.liveKey(principal);
    if (key === null) return;
    if (topic === null) {
      // The whole broker: admin means admin on `*`; read means any key (what it sees is filtered).
      if (action === "read" || isGlobalAdminGrants(key.acls)) return;
      throw new SvcError("forbidden", `key '${key.name}' has no ${action} grant on '*'`);
    }
    if (!grantsAllow(key.acls, action, topic)) throw new SvcError("forbidden", `key '${key.name}' has no ${action} grant covering topic '${topic}'`);
  }

  checkSomewhere(principal: Principal, action: Action): void {
    const key = this.keys.liveKey(principal);
    if (key === null || key.acls.some((g) => actionCovers(g.action, action))) return;
    throw new SvcError("forbidden", `key '${key.name}' has no ${action} grant on any topic`);
  }

  canRead(principal: Principal, topic: string): boolean {
    const key = this.keys.liveKey(principal);
    return key === null || grantsAllow(key.acls, "read", topic);
  }

  isGlobalAdmin(principal: Principal): boolean {
    const key = this.keys.liveKey(principal);
    return key === null || isGlobalAdminGrants(key.acls);
  }
}
