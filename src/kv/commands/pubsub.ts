/**
 * SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and PUBSUB's introspection.
 */
import { globMatch } from "../glob.ts";
import { helpReply } from "./keys.ts";
import { replyStrings } from "./lookup.ts";
import type { CommandSpec, Exec } from "./spec.ts";

function pubsubIntrospection(x: Exec, argv: string[]): void {
  const hub = x.engine.pubsub;
  const sub = argv[1]!.toLowerCase();
  if (sub === "channels") {
    const pattern = argv[2];
    const names: string[] = [];
    for (const c of hub.channels.keys()) if (pattern === undefined || globMatch(pattern, c)) names.push(c);
    replyStrings(x, names);
  } else if (sub === "numsub") {
    x.reply.array((argv.length - 2) * 2);
    for (let i = 2; i < argv.length; i++) {
      const channel = argv[i]!;
      x.reply.bulk(channel);
      x.reply.integer(hub.channels.get(channel)?.size ?? 0);
    }
  } else if (sub === "numpat") x.reply.integer(hub.patterns.size);
  else helpReply(x, "PUBSUB", ["CHANNELS [<pattern>]", "NUMPAT", "NUMSUB [<channel> ...]"]);
}

const flags = ["pubsub", "noscript", "loading", "stale"] as const;
const introspection = (name: string, arity: number, summary: string): CommandSpec => ({
  name: `pubsub|${name}`, arity, flags, group: "pubsub", summary, run: pubsubIntrospection,
});

export const pubsubCommands: readonly CommandSpec[] = [
  { name: "subscribe", arity: -2, flags, group: "pubsub", summary: "Listens to channels.", run: (x, argv) => x.engine.pubsub.subscribe(x.session, argv.slice(1), false) },
  { name: "unsubscribe", arity: -1, flags, group: "pubsub", summary: "Stops listening to channels.", run: (x, argv) => x.engine.pubsub.unsubscribe(x.session, argv.slice(1), false) },
  { name: "psubscribe", arity: -2, flags, group: "pubsub", summary: "Listens to channels matching patterns.", run: (x, argv) => x.engine.pubsub.subscribe(x.session, argv.slice(1), true) },
  { name: "punsubscribe", arity: -1, flags, group: "pubsub", summary: "Stops listening to patterns.", run: (x, argv) => x.engine.pubsub.unsubscribe(x.session, argv.slice(1), true) },
  {
    name: "publish", arity: 3, flags: ["pubsub", "loading", "stale", "fast"], group: "pubsub", summary: "Posts a message to a channel.",
    run: (x, argv) => x.reply.integer(x.engine.pubsub.publish(argv[1]!, argv[2]!)),
  },
  {
    name: "pubsub", arity: -2, flags: [], group: "pubsub", summary: "Pub/sub introspection.",
    subcommands: [
      introspection("channels", -2, "Lists the active channels."),
      introspection("numsub", -2, "Counts subscribers of channels."),
      introspection("numpat", 2, "Counts pattern subscriptions."),
      introspection("help", 2, "Shows PUBSUB's subcommands."),
    ],
  },
];
