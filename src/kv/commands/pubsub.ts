/**
 * SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, their shard-channel forms (SSUBSCRIBE,
 * SUNSUBSCRIBE, SPUBLISH) and PUBSUB's introspection.
 */
import { KvError, subcommandSyntaxError } from "../text/errors.ts";
import { globMatch } from "../text/glob.ts";
import type { SessionIndex } from "../server/session.ts";
import { helpReply } from "../kit/help.ts";
import { replyStrings } from "../kit/lookup.ts";
import { type CommandSpec, type Exec, helpFlags } from "../kit/spec.ts";

function pubsubIntrospection(x: Exec, argv: string[]): void {
  const hub = x.engine.pubsub;
  const sub = argv[1]!.toLowerCase();
  if (sub === "channels" || sub === "shardchannels") {
    // One pattern at most: more is a subcommand syntax error, as pubsubCommand answers.
    if (argv.length > 3) throw subcommandSyntaxError("PUBSUB", argv[1]!);
    const pattern = argv[2];
    const names: string[] = [];
    for (const c of (sub === "channels" ? hub.channels : hub.shardChannels).keys()) if (pattern === undefined || globMatch(pattern, c)) names.push(c);
    replyStrings(x, names);
  } else if (sub === "numsub" || sub === "shardnumsub") numsub(x, argv, sub === "numsub" ? hub.channels : hub.shardChannels);
  else if (sub === "numpat") x.reply.integer(hub.patterns.size);
  else helpReply(x, "PUBSUB", ["CHANNELS [<pattern>]", "NUMPAT", "NUMSUB [<channel> ...]", "SHARDCHANNELS [<pattern>]", "SHARDNUMSUB [<shardchannel> ...]"]);
}

/** (SHARD)NUMSUB: channel, count, … flat, RESP3 too (Redis 7.0 answers an array there, not a map). */
function numsub(x: Exec, argv: string[], index: SessionIndex): void {
  x.reply.array((argv.length - 2) * 2);
  for (let i = 2; i < argv.length; i++) {
    const channel = argv[i]!;
    x.reply.bulk(channel);
    x.reply.integer(index.get(channel)?.size ?? 0);
  }
}

/** SSUBSCRIBE inside EXEC cannot hold the connection for its messages, as in Redis. */
function ssubscribe(x: Exec, argv: string[]): void {
  if (x.session.inExec) throw new KvError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
  x.engine.pubsub.subscribe(x.session, argv.slice(1), "shard");
}

const flags = ["pubsub", "noscript", "loading", "stale"] as const;
/** PUBSUB's subcommands: read-only views, which Redis does not flag noscript. */
const introspectionFlags = ["pubsub", "loading", "stale"] as const;
const introspection = (name: string, arity: number, summary: string): CommandSpec => ({
  name: `pubsub|${name}`,
  arity,
  flags: name === "help" ? helpFlags : introspectionFlags,
  group: "pubsub",
  summary,
  run: pubsubIntrospection,
});

export const pubsubCommands: readonly CommandSpec[] = [
  {
    name: "subscribe",
    arity: -2,
    flags,
    group: "pubsub",
    summary: "Listens to channels.",
    run: (x, argv) => x.engine.pubsub.subscribe(x.session, argv.slice(1), "channel"),
  },
  {
    name: "unsubscribe",
    arity: -1,
    flags,
    group: "pubsub",
    summary: "Stops listening to channels.",
    run: (x, argv) => x.engine.pubsub.unsubscribe(x.session, argv.slice(1), "channel"),
  },
  {
    name: "psubscribe",
    arity: -2,
    flags,
    group: "pubsub",
    summary: "Listens to channels matching patterns.",
    run: (x, argv) => x.engine.pubsub.subscribe(x.session, argv.slice(1), "pattern"),
  },
  {
    name: "punsubscribe",
    arity: -1,
    flags,
    group: "pubsub",
    summary: "Stops listening to patterns.",
    run: (x, argv) => x.engine.pubsub.unsubscribe(x.session, argv.slice(1), "pattern"),
  },
  { name: "ssubscribe", arity: -2, flags, group: "pubsub", keys: [1, -1, 1], summary: "Listens to shard channels.", run: ssubscribe },
  {
    name: "sunsubscribe",
    arity: -1,
    flags,
    group: "pubsub",
    keys: [1, -1, 1],
    summary: "Stops listening to shard channels.",
    run: (x, argv) => x.engine.pubsub.unsubscribe(x.session, argv.slice(1), "shard"),
  },
  {
    name: "spublish",
    arity: 3,
    flags: ["pubsub", "loading", "stale", "fast"],
    group: "pubsub",
    keys: [1, 1, 1],
    summary: "Posts a message to a shard channel.",
    run: (x, argv) => x.reply.integer(x.engine.pubsub.publishShard(argv[1]!, argv[2]!)),
  },
  {
    name: "publish",
    arity: 3,
    flags: ["pubsub", "loading", "stale", "fast"],
    group: "pubsub",
    summary: "Posts a message to a channel.",
    run: (x, argv) => x.reply.integer(x.engine.pubsub.publish(argv[1]!, argv[2]!)),
  },
  {
    name: "pubsub",
    arity: -2,
    flags: [],
    group: "pubsub",
    summary: "Pub/sub introspection.",
    subcommands: [
      introspection("channels", -2, "Lists the active channels."),
      introspection("numsub", -2, "Counts subscribers of channels."),
      introspection("numpat", 2, "Counts pattern subscriptions."),
      introspection("shardchannels", -2, "Lists the active shard channels."),
      introspection("shardnumsub", -2, "Counts subscribers of shard channels."),
      introspection("help", 2, "Shows PUBSUB's subcommands."),
    ],
  },
];
