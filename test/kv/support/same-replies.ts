/**
 * Commands run on redis-server and on svc, expected to answer alike: the comparison the
 * side-by-side script tests make. A script's SHA-1 in an error is the same on both, so replies are
 * compared whole.
 */
import { expect } from "bun:test";
import { type RespClient, type RespValue, show } from "./resp-client.ts";

/** How much of a command a failing comparison shows. */
const commandShownChars = 160;

/**
 * Runs `commands` on both clients, after `first` (FLUSHALL and SCRIPT FLUSH unless given), and
 * expects the same replies; returns svc's.
 */
export async function sameReplies(
  redis: RespClient,
  kv: RespClient,
  commands: readonly (readonly string[])[],
  first: readonly (readonly string[])[] = [["FLUSHALL"], ["SCRIPT", "FLUSH"]],
): Promise<RespValue[]> {
  const [redisReplies, kvReplies] = await Promise.all([redis, kv].map((client) => client.pipeline([...first, ...commands])));
  const rows = (replies: RespValue[]) =>
    commands.map((command, i) => ({ command: command.join(" ").slice(0, commandShownChars), reply: show(replies[first.length + i]!) }));
  expect(rows(kvReplies!)).toEqual(rows(redisReplies!));
  return kvReplies!.slice(first.length);
}

/** EVAL of `body` with no keys, then `args` as ARGV. */
export const evalOf = (body: string, ...args: string[]): string[] => ["EVAL", body, "0", ...args];
