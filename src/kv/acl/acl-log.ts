/**
 * ACL LOG: the commands, keys and channels refused to users, and the failed logins, newest first.
 * As in Redis 7.0, a refusal like one logged in the last minute (same reason, context, object and
 * user) counts on that entry, which moves to the front, rather than making another.
 */

/** What was refused: a command, a key, a channel, or a login. */
export type AclDenial = "command" | "key" | "channel" | "auth";
/** Where: a command of the client's own, one queued in MULTI, or one a script called. */
export type AclContext = "toplevel" | "multi" | "lua";

/** Entries kept at most unless CONFIG SET acllog-max-len says otherwise (Redis's default). */
export const aclLogEntriesMaxDefault = 128;
/** How long a refusal like an earlier one counts on that one's entry. */
const groupingWindowMs = 60_000;

export interface AclLogEntry {
  count: number;
  reason: AclDenial;
  context: AclContext;
  /** The command's, key's or channel's name; for a login, the command as typed (AUTH, HELLO). */
  object: string;
  username: string;
  createdMs: number;
  /** The client as CLIENT LIST shows it, when the entry was last counted. */
  clientInfo: string;
}

export class AclLog {
  /** Newest first. */
  readonly entries: AclLogEntry[] = [];
  /** acllog-max-len. */
  private entriesMax = aclLogEntriesMaxDefault;

  /** CONFIG SET acllog-max-len: the oldest entries past it go at once. */
  setEntriesMax(entries: number): void {
    this.entriesMax = entries;
    if (this.entries.length > entries) this.entries.length = entries;
  }

  add(entry: Omit<AclLogEntry, "count" | "createdMs">, nowMs: number): void {
    const at = this.entries.findIndex(
      (e) =>
        e.reason === entry.reason &&
        e.context === entry.context &&
        e.object === entry.object &&
        e.username === entry.username &&
        nowMs - e.createdMs < groupingWindowMs,
    );
    if (at >= 0) {
      const [earlier] = this.entries.splice(at, 1);
      earlier!.count++;
      earlier!.createdMs = nowMs;
      earlier!.clientInfo = entry.clientInfo;
      this.entries.unshift(earlier!);
      return;
    }
    this.entries.unshift({ ...entry, count: 1, createdMs: nowMs });
    if (this.entries.length > this.entriesMax) this.entries.length = this.entriesMax;
  }

  reset(): void {
    this.entries.length = 0;
  }
}
