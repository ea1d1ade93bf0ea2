/**
 * The dispatch table, built from every module's declarations. Lookups try the name as sent, then
 * lower case: clients send "SET" or "set", and both are in the table, so the common case does not
 * allocate a lower-cased copy.
 */
import { aclCommands } from "../commands/acl.ts";
import { latencyCommands } from "../commands/latency.ts";
import { connectionCommands } from "../commands/connection.ts";
import { keyCommands } from "../commands/keys.ts";
import { persistenceCommands } from "../commands/persistence.ts";
import { pubsubCommands } from "../commands/pubsub.ts";
import { dumpCommands } from "../commands/dump.ts";
import { serverCommands } from "../commands/server-commands.ts";
import { sortCommands } from "../commands/sort.ts";
import { standaloneCommands } from "../commands/standalone.ts";
import { moduleCommands } from "../commands/modules.ts";
import type { CommandSpec } from "../kit/spec.ts";
import { workOutTraits } from "./command-traits.ts";
import { functionCommands } from "../commands/functions.ts";
import { scriptingCommands } from "../commands/scripting.ts";
import { transactionCommands } from "../commands/transactions.ts";
import { hashCommands } from "../commands/hash.ts";
import { listCommands } from "../commands/list.ts";
import { setCommands } from "../commands/set.ts";
import { stringCommands } from "../commands/string.ts";
import { zsetCommands } from "../commands/zset/zset-commands.ts";
import { bitmapCommands } from "../commands/bitmap/bitmap-commands.ts";
import { hyperloglogCommands } from "../commands/hyperloglog.ts";
import { geoCommands } from "../commands/geo.ts";
import { bloomCommands } from "../commands/bloom.ts";
import { streamCommands } from "../commands/stream/stream-commands.ts";

const declarations: readonly CommandSpec[] = [
  ...connectionCommands,
  ...serverCommands,
  ...latencyCommands,
  ...aclCommands,
  ...standaloneCommands,
  ...moduleCommands,
  ...persistenceCommands,
  ...keyCommands,
  ...sortCommands,
  ...dumpCommands,
  ...transactionCommands,
  ...scriptingCommands,
  ...functionCommands,
  ...pubsubCommands,
  ...stringCommands,
  ...listCommands,
  ...hashCommands,
  ...setCommands,
  ...zsetCommands,
  ...bitmapCommands,
  ...hyperloglogCommands,
  ...geoCommands,
  ...bloomCommands,
  ...streamCommands,
];

export const commandTable = new Map<string, CommandSpec>(declarations.map((spec) => [spec.name, spec]));

// Each command and subcommand numbered (CommandShape.statsIndex), its traits worked out.
let numbered = 0;
for (const spec of declarations) {
  for (const each of [spec, ...(spec.subcommands ?? [])]) {
    each.statsIndex = numbered++;
    each.traits = workOutTraits(each);
  }
}

const byAnyCase = new Map<string, CommandSpec>();
for (const spec of declarations) {
  byAnyCase.set(spec.name, spec);
  byAnyCase.set(spec.name.toUpperCase(), spec);
}

export function lookupCommand(name: string): CommandSpec | undefined {
  return byAnyCase.get(name) ?? byAnyCase.get(name.toLowerCase());
}
