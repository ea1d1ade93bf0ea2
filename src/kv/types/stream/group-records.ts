/**
 * What the append-only file records for a consumer group's state — the commands that recreate it
 * on replay, as Redis propagates them to its replicas and file. XREADGROUP, XCLAIM, XAUTOCLAIM and
 * XGROUP record them as they change a group, and a rewrite writes a group's whole state with them.
 */
import type { ConsumerGroup, PendingEntry } from "./consumer-group.ts";
import { formatId } from "./stream-id.ts";

/** What the file records for a pending entry as it is now (Redis's streamPropagateXCLAIM). */
export function claimCommand(key: string, groupName: string, group: ConsumerGroup, entry: PendingEntry, consumerName: string): string[] {
  return [
    "XCLAIM",
    key,
    groupName,
    consumerName,
    "0",
    formatId(entry.id),
    "TIME",
    String(entry.deliveredMs),
    "RETRYCOUNT",
    String(entry.deliveries),
    "FORCE",
    "JUSTID",
    "LASTID",
    formatId(group.lastId),
  ];
}

/** What the file records for a group made at its last ID and read count (MKSTREAM: for an empty stream too). */
export const createGroupCommand = (key: string, groupName: string, group: ConsumerGroup): string[] => [
  "XGROUP",
  "CREATE",
  key,
  groupName,
  formatId(group.lastId),
  "MKSTREAM",
  "ENTRIESREAD",
  String(group.entriesRead ?? -1n),
];

/** What the file records for a consumer made in a group. */
export const createConsumerCommand = (key: string, groupName: string, consumerName: string): string[] => [
  "XGROUP",
  "CREATECONSUMER",
  key,
  groupName,
  consumerName,
];

/** What the file records for a group's position (Redis's streamPropagateGroupID). */
export const setIdCommand = (key: string, groupName: string, group: ConsumerGroup): string[] => [
  "XGROUP",
  "SETID",
  key,
  groupName,
  formatId(group.lastId),
  "ENTRIESREAD",
  String(group.entriesRead ?? -1n),
];
