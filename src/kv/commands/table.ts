/**
 * The dispatch table, built from every module's declarations. Lookups try the name as sent, then
 * lower case: clients send "SET" or "set", and both are in the table, so the common case does not
 * allocate a lower-cased copy.
 */
import { aclCommands } from "./acl.ts";
import { latencyCommands } from "./latency.ts";
import { connectionCommands } from "./connection.ts";
import { keyCommands } from "./keys.ts";
import { persistenceCommands } from "./persistence.ts";
import { pubsubCommands } from "./pubsub.ts";
import { dumpCommands } from "./dump.ts";
import { serverCommands } from "./server.ts";
import { sortCommands } from "./sort.ts";
import { standaloneCommands } from "./standalone.ts";
import type { CommandSpec } from "./spec.ts";
import { functionCommands } from "./functions.ts";
import { scriptingCommands } from "./scripting.ts";
import { transactionCommands } from "./transactions.ts";
import { hashCommands } from "../types/hash.ts";
import { listCommands } from "../types/list.ts";
import { setCommands } from "../types/set.ts";
import { stringCommands } from "../types/string.ts";
import { zsetCommands } from "../types/zset/commands.ts";
import { bitmapCommands } from "../types/bitmap/commands.ts";
import { hyperloglogCommands } from "../types/hyperloglog/commands.ts";
import { geoCommands } from "../types/geo/commands.ts";
import { bloomCommands } from "../types/bloom/commands.ts";
import { streamCommands } from "../types/stream/commands.ts";

const declarations: readonly CommandSpec[] = [
  ...connectionCommands,
  ...serverCommands,
  ...latencyCommands,
  ...aclCommands,
  ...standaloneCommands,
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

const byAnyCase = new Map<string, CommandSpec>();
for (const spec of declarations) {
  byAnyCase.set(spec.name, spec);
  byAnyCase.set(spec.name.toUpperCase(), spec);
}

export function lookupCommand(name: string): CommandSpec | undefined {
  return byAnyCase.get(name) ?? byAnyCase.get(name.toLowerCase());
}
