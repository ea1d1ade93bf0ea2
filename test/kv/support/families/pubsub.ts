/**
 * Pub/sub's generated steps on three clients — A and B speak RESP2, C RESP3: SUBSCRIBE,
 * PSUBSCRIBE, SSUBSCRIBE and their UNs (with channels, with none, with ones not subscribed),
 * PUBLISH and SPUBLISH to channels some patterns match, PUBSUB's introspection subcommands with
 * and without patterns, commands a RESP2 subscriber may and may not send, PING with and without a
 * message, RESET, a PUBLISH inside MULTI, and wrong arities. What every client receives is written
 * down where it arrives. The state compared after a sequence: PUBSUB NUMSUB, NUMPAT, CHANNELS,
 * SHARDCHANNELS and SHARDNUMSUB, and each client's sub/psub/ssub counts and flags in CLIENT LIST.
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, lit, type Names, sortedRuns, type Step } from "../duet.ts";
import { type RespClient, type RespValue, show } from "../resp-client.ts";

export const channels = ["c1", "c2", "news.x", "news.y", "other"];
const channel = fc.constantFrom(...channels);
const pattern = fc.constantFrom("news.*", "c?", "*", "[c]1", "nomatch*", "c1");
const some = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 3 });
const message = fc.constantFrom("hi", "", "two words", "\u0000\u00ff");

const subscribing = fc.oneof(
  { weight: 3, arbitrary: cmd(fc.constantFrom("SUBSCRIBE", "SSUBSCRIBE", "subscribe"), some(channel)) },
  { weight: 3, arbitrary: cmd(lit("PSUBSCRIBE"), some(pattern)) },
  { weight: 2, arbitrary: cmd(fc.constantFrom("UNSUBSCRIBE", "SUNSUBSCRIBE"), fc.array(channel, { maxLength: 2 })) },
  { weight: 2, arbitrary: cmd(lit("PUNSUBSCRIBE"), fc.array(pattern, { maxLength: 2 })) },
);
const publishing = cmd(fc.constantFrom("PUBLISH", "PUBLISH", "SPUBLISH"), channel, message);
const introspection = fc.oneof(
  cmd(lit("PUBSUB"), fc.constantFrom("CHANNELS", "SHARDCHANNELS", "channels"), fc.constantFrom<string[]>([], ["*"], ["news.*"], ["c?"], ["x"])),
  cmd(lit("PUBSUB"), fc.constantFrom("NUMSUB", "SHARDNUMSUB"), fc.array(channel, { maxLength: 3 })),
  fc.constantFrom<string[]>(
    ["PUBSUB", "NUMPAT"],
    ["PUBSUB", "NUMPAT", "x"],
    ["PUBSUB", "CHANNELS", "a", "b"],
    ["PUBSUB"],
    ["PUBSUB", "NOSUCH"],
    ["PUBSUB", "SHARDCHANNELS", "a", "b"],
  ),
);
/** What a subscriber may send (RESP2: only these), and what it may not. */
const others = fc.constantFrom<string[]>(
  ["PING"],
  ["PING", "msg"],
  ["PING", "a", "b"],
  ["GET", "k"],
  ["SET", "k", "v"],
  ["SUBSCRIBE"],
  ["PSUBSCRIBE"],
  ["SSUBSCRIBE"],
  ["PUBLISH", "c1"],
  ["SPUBLISH", "c1"],
  ["RESET"],
  ["ECHO", "x"],
  ["CLIENT", "SETNAME", "n"],
  ["QUIT"],
);
const inTransaction = fc
  .tuple(fc.constantFrom("A", "B", "C"), publishing, fc.constantFrom<string[][]>([], [["SUBSCRIBE", "c1"]], [["PUBSUB", "NUMSUB", "c1"]]))
  .map(([client, publish, extra]): Step[] => [["MULTI"], publish, ...extra, ["EXEC"]].map((argv) => ({ client, argv })));

const client = fc.constantFrom("A", "B", "C");
export const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: by(client, subscribing).map((s) => [s]) },
      { weight: 5, arbitrary: by(client, publishing).map((s) => [s]) },
      { weight: 2, arbitrary: by(client, introspection).map((s) => [s]) },
      { weight: 2, arbitrary: by(client, others).map((s) => [s]) },
      { weight: 1, arbitrary: inTransaction },
    ),
    { minLength: 1, maxLength: 25 },
  )
  .map((parts) => parts.flat());

/** The items of a RESP2 array or a RESP3 push. */
const itemsOf = (v: RespValue): RespValue[] | null => (Array.isArray(v) ? v : v !== null && typeof v === "object" && "push" in v ? v.push : null);
const withItems = (v: RespValue, items: RespValue[]): RespValue => (Array.isArray(v) ? items : { push: items });
const kindOf = (v: RespValue) => String(itemsOf(v)?.[0] ?? "");
const unsubscribes = new Set(["unsubscribe", "punsubscribe", "sunsubscribe"]);

/**
 * Two orders Redis does not define. (P|S)UNSUBSCRIBE without arguments walks a hash table: its
 * confirmations are sorted by channel, and their counts (which fall by one each, whatever the
 * order) are left out. Messages for several patterns matching one PUBLISH come in the order of
 * Redis's pattern table: each run of pmessages is sorted.
 */
export function normaliseGroup(argv: string[] | null, values: RespValue[]): RespValue[] {
  const word = argv?.[0]?.toLowerCase() ?? "";
  if (argv !== null && argv.length === 1 && unsubscribes.has(word)) {
    return values
      .map((v) => (unsubscribes.has(kindOf(v)) ? withItems(v, [...itemsOf(v)!.slice(0, 2), "<count>"]) : v))
      .sort((a, b) => show(a).localeCompare(show(b)));
  }
  return sortedRuns(values, (v) => kindOf(v) === "pmessage");
}

const sortedArray = (v: RespValue): RespValue => (Array.isArray(v) ? [...v].sort((a, b) => show(a).localeCompare(show(b))) : v);

/** The fields of CLIENT LIST that say what a client is subscribed to. */
const subscriptionFields = ["id", "flags", "sub", "psub", "ssub", "multi", "resp"];

export async function pubsubLines(c: RespClient, names: Names): Promise<string[]> {
  const list = (await c.call("CLIENT", "LIST")) as string;
  const clients = names
    .text(list)
    .split("\n")
    .filter((l) => l.startsWith("id=<"))
    .map((l) =>
      l
        .split(" ")
        .filter((f) => subscriptionFields.includes(f.slice(0, f.indexOf("="))))
        .join(" "),
    )
    .sort();
  return [
    `numsub ${show(await c.call("PUBSUB", "NUMSUB", ...channels))}`,
    `shardnumsub ${show(await c.call("PUBSUB", "SHARDNUMSUB", ...channels))}`,
    `numpat ${show(await c.call("PUBSUB", "NUMPAT"))}`,
    `channels ${show(sortedArray(await c.call("PUBSUB", "CHANNELS")))}`,
    `shardchannels ${show(sortedArray(await c.call("PUBSUB", "SHARDCHANNELS")))}`,
    ...clients,
  ];
}

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 2 },
    { name: "C", protocol: 3 },
  ],
  normaliseGroup,
  normalise: (argv, reply) => {
    const word = `${argv[0]} ${argv[1] ?? ""}`.toUpperCase();
    // PUBSUB CHANNELS and SHARDCHANNELS list a hash table's keys: unordered.
    if (word === "PUBSUB CHANNELS" || word === "PUBSUB SHARDCHANNELS") return sortedArray(reply);
    // A RESP3 client's own messages from a PUBLISH in its transaction come inside EXEC's reply
    // (both servers write them there), where several patterns' are in hash-table order again.
    if (argv[0]!.toUpperCase() === "EXEC" && Array.isArray(reply)) return normaliseGroup(null, reply);
    return reply;
  },
  snapshot: pubsubLines,
};
