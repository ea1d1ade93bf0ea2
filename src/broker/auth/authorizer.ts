/**
 * The grants check every operation passes (requests/pipeline.ts): whether a principal may take an
 * action on a topic. It sees a Principal, never a front's request, so the binary protocol, a
 * Kafka listener and Raft followers are judged alike. The broker's is key-authorizer.ts; it
 * throws the spec's 401 or 403 SvcError.
 */
import type { Principal } from "./principal.ts";

/** The spec's grant actions: read, write (read plus produce) and admin. */
export type Action = "read" | "write" | "admin";

export interface Authorizer {
  /** Throws 401/403 unless `principal` may do `action` on `topic` (null: the whole broker). */
  check(principal: Principal, action: Action, topic: string | null): void;
  /** Whether `principal` may read `topic`; lists show only these. */
  canRead(principal: Principal, topic: string): boolean;
  /** Throws 401/403 unless `principal` may take `action` on some topic (the binary protocol's check before inflating a frame). */
  checkSomewhere(principal: Principal, action: Action): void;
  /** Whether `principal` holds admin on `*`, which may use any key's groups and producer ids. */
  isGlobalAdmin(principal: Principal): boolean;
}
