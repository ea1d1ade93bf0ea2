/**
 * A command's ACL categories (COMMAND INFO, COMMAND LIST FILTERBY ACLCAT), derived as Redis
 * derives most of its own: from the command's flags (write, read, fast or slow, admin, blocking,
 * pubsub) and its group (the data type, keyspace, connection, transaction), and for the few it
 * lists by hand, as it lists them.
 */
import type { CommandGroup, CommandShape } from "./command-info.ts";

/** The category each group's commands belong to, as Redis names them. */
const groupCategory: Partial<Record<CommandGroup, string>> = {
  generic: "keyspace",
  string: "string",
  list: "list",
  hash: "hash",
  set: "set",
  sorted_set: "sortedset",
  hyperloglog: "hyperloglog",
  geo: "geo",
  bitmap: "bitmap",
  stream: "stream",
  pubsub: "pubsub",
  transactions: "transaction",
  connection: "connection",
  scripting: "scripting",
};

/**
 * The commands whose categories Redis lists by hand rather than from their flags and group: the
 * dangerous ones (KEYS, FLUSHALL, SORT …), those filed under a type they do not belong to by
 * group (SORT under list, set and sortedset, WAIT under connection), and the containers CLIENT,
 * OBJECT, PUBSUB, XGROUP and XINFO, which are only slow. Compared with redis-server for every command
 * (test/kv/commands/command-docs.test.ts).
 */
const listedByHand: Readonly<Record<string, readonly string[]>> = {
  swapdb: ["keyspace", "write", "fast", "dangerous"],
  client: ["slow"],
  xgroup: ["slow"],
  xinfo: ["slow"],
  command: ["slow", "connection"],
  "command|count": ["slow", "connection"],
  "command|docs": ["slow", "connection"],
  "command|getkeys": ["slow", "connection"],
  "command|getkeysandflags": ["slow", "connection"],
  "command|help": ["slow", "connection"],
  "command|info": ["slow", "connection"],
  "command|list": ["slow", "connection"],
  object: ["slow"],
  pubsub: ["slow"],
  "pubsub|help": ["slow"],
  info: ["slow", "dangerous"],
  dbsize: ["keyspace", "read", "fast"],
  flushdb: ["keyspace", "write", "slow", "dangerous"],
  flushall: ["keyspace", "write", "slow", "dangerous"],
  eval_ro: ["slow", "scripting"],
  evalsha_ro: ["slow", "scripting"],
  script: ["slow"],
  function: ["slow"],
  fcall_ro: ["slow", "scripting"],
  role: ["admin", "fast", "dangerous"],
  lastsave: ["admin", "fast", "dangerous"],
  wait: ["slow", "connection"],
  readonly: ["fast", "connection"],
  readwrite: ["fast", "connection"],
  asking: ["fast", "connection"],
  keys: ["keyspace", "read", "slow", "dangerous"],
  sort: ["write", "set", "sortedset", "list", "slow", "dangerous"],
  sort_ro: ["read", "set", "sortedset", "list", "slow", "dangerous"],
  restore: ["keyspace", "write", "slow", "dangerous"],
  migrate: ["keyspace", "write", "slow", "dangerous"],
  "restore-asking": ["keyspace", "write", "slow", "dangerous"],
};

/** Every category, in the order Redis lists a command's (its category bits' order). */
export const allCategories = [
  "keyspace",
  "read",
  "write",
  "set",
  "sortedset",
  "list",
  "hash",
  "string",
  "bitmap",
  "hyperloglog",
  "geo",
  "stream",
  "pubsub",
  "admin",
  "fast",
  "slow",
  "blocking",
  "dangerous",
  "connection",
  "transaction",
  "scripting",
];

/** The categories of `spec`, without the leading "@" (Redis writes it in COMMAND INFO only), in Redis's order. */
export function aclCategories(spec: CommandShape): string[] {
  const categories = [...(listedByHand[spec.name] ?? derived(spec))];
  return categories.sort((a, b) => allCategories.indexOf(a) - allCategories.indexOf(b));
}

function derived(spec: CommandShape): string[] {
  const categories: string[] = [];
  const add = (category: string | undefined) => {
    if (category !== undefined && !categories.includes(category)) categories.push(category);
  };
  if (spec.group === "generic") add("keyspace");
  if (spec.flags.includes("write")) add("write");
  if (spec.flags.includes("readonly")) add("read");
  add(groupCategory[spec.group]);
  if (spec.flags.includes("pubsub")) add("pubsub");
  if (spec.flags.includes("admin")) {
    add("admin");
    add("dangerous");
  }
  add(spec.flags.includes("fast") ? "fast" : "slow");
  if (spec.flags.includes("blocking")) add("blocking");
  return categories;
}
