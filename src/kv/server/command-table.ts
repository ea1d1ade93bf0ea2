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
import { migrateCommands } from "../commands/migrate/migrate.ts";
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
  ...migrateCommands,
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

/** The next command's number (CommandShape.statsIndex): each command, then its subcommands. */
let numbered = 0;

/**
 * Every property a command's spec may have, each one required: a property added to CommandShape
 * and not copied by uniform below fails to type-check, rather than being dropped from every spec.
 */
type EveryProperty<T> = { [K in keyof Required<T>]: T[K] };

/**
 * `spec` again as an object of the one shape every command's has here — the same properties, in
 * the same order — numbered and with its traits worked out. The modules declare theirs as
 * literals of many shapes (whichever optional properties each has, in its own order), and the
 * code every command passes through — the engine's run, a script's checks — reads them: met with
 * a workload of many commands (BullMQ's scripts call some twenty), its compiled code's property
 * reads saw too many shapes, exited and was compiled again, over and over.
 */
function uniform(spec: CommandSpec): CommandSpec {
  const statsIndex = numbered++;
  const same: EveryProperty<CommandSpec> = {
    name: spec.name,
    arity: spec.arity,
    flags: spec.flags,
    group: spec.group,
    summary: spec.summary,
    keys: spec.keys,
    movableKeys: spec.movableKeys,
    run: spec.run,
    subcommands: spec.subcommands?.map(uniform),
    flagsFor: spec.flagsFor,
    protectedBy: spec.protectedBy,
    statsIndex,
    traits: workOutTraits(spec),
  };
  return same;
}

const commands = declarations.map(uniform);

export const commandTable = new Map<string, CommandSpec>(commands.map((spec) => [spec.name, spec]));

const byAnyCase = new Map<string, CommandSpec>();
for (const spec of commands) {
  byAnyCase.set(spec.name, spec);
  byAnyCase.set(spec.name.toUpperCase(), spec);
}

export function lookupCommand(name: string): CommandSpec | undefined {
  return byAnyCase.get(name) ?? byAnyCase.get(name.toLowerCase());
}
