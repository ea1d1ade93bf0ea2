/**
 * ACL's generated steps: ACL SETUSER of two users with rules drawn from Redis 7.0's whole set —
 * passwords, key patterns for reading, writing or both (~, %R~, %W~), channels, commands,
 * categories, container|subcommand and first-argument rules (+select|0), selectors `(…)` given
 * whole or split over arguments, clearselectors, reset — and bad rules among them; ACL DRYRUN of
 * commands touching keys and channels those rules name; a client (B) logging in as a user and
 * running such commands for real (NOPERM, and its subscriptions cut when its channels go); ACL
 * DELUSER. The state compared after a sequence: ACL LIST, each user's GETUSER and ACL LOG.
 */
import fc from "fast-check";
import { normaliseAclLine, normaliseCommandRules } from "../acl-rules.ts";
import { by, cmd, type DuetOptions, lit, type Step } from "../duet.ts";
import type { RespClient, RespValue } from "../resp-client.ts";

const users = ["u1", "u2"];
const user = fc.constantFrom(...users);

/** Key patterns with a permission each — the same pattern may come with another, and gathers it. */
const keyRule = fc
  .tuple(fc.constantFrom("~", "%R~", "%W~", "%RW~", "%r~", "%wR~"), fc.constantFrom("k*", "r*", "w*", "x1", "*"))
  .map(([permission, pattern]) => permission + pattern);
/** Rules a selector takes, as well as the user's root. */
const selectorRule = fc.oneof(
  { weight: 3, arbitrary: keyRule },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "allkeys",
      "resetkeys",
      "&c*",
      "&c1",
      "&d*",
      "allchannels",
      "resetchannels",
      "+get",
      "+set",
      "-get",
      "+mget",
      "+copy",
      "+publish",
      "+subscribe",
      "+spublish",
      "+sort",
      "+eval",
      "+@read",
      "+@write",
      "-@write",
      "+@all",
      "-@all",
      "+@pubsub",
      "+select|0",
      "+select|1",
      "-select",
      "+client|getname",
      "-client",
      "+config|get",
      "+acl|whoami",
    ),
  },
);
/** Rules that are wrong, each refused with Redis's words and changing nothing. */
const badRule = fc.constantFrom("+nosuch", "+@nosuch", "%X~y", "%~y", "~a b", "+select|", "+config|get|x", "-select|0", "&*x", "(on)", "(>pw)", "(+nosuch)");
const selector = fc.array(selectorRule, { minLength: 0, maxLength: 4 }).map((rules) => `(${rules.join(" ")})`);
/** A selector split over arguments as a client may send it: "(+get" "~k*)". */
const splitSelector = fc.array(selectorRule, { minLength: 2, maxLength: 4 }).map((rules) => [`(${rules[0]}`, ...rules.slice(1, -1), `${rules.at(-1)})`]);
const userRule = fc.oneof(
  { weight: 8, arbitrary: selectorRule.map((r) => [r]) },
  { weight: 3, arbitrary: fc.constantFrom(["on"], ["off"], [">pw"], ["nopass"], ["resetpass"], ["clearselectors"], ["reset"]) },
  { weight: 3, arbitrary: selector.map((s) => [s]) },
  { weight: 1, arbitrary: splitSelector },
  { weight: 1, arbitrary: badRule.map((r) => [r]) },
);
/**
 * ACL SETUSER with a few rules, then +ping: the duet follows each command with PING (its sync
 * marker), which a logged-in user must be allowed to run.
 */
const setuser = cmd(
  lit("ACL"),
  lit("SETUSER"),
  user,
  fc.array(userRule, { minLength: 1, maxLength: 5 }).map((rules) => [...rules.flat(), "+ping"]),
);

/** Commands whose keys, channels and first arguments the rules above decide. */
const probe = fc.constantFrom<string[]>(
  ["GET", "k1"],
  ["GET", "r1"],
  ["GET", "w1"],
  ["MGET", "k1", "r1"],
  ["MGET", "r1", "w1", "x1"],
  ["SET", "w1", "v"],
  ["SET", "r1", "v"],
  ["SET", "x1", "v", "GET"],
  ["COPY", "r1", "w2"],
  ["COPY", "w1", "r2"],
  ["PUBLISH", "c1", "m"],
  ["PUBLISH", "d1", "m"],
  ["SPUBLISH", "c1", "m"],
  ["SUBSCRIBE", "c1"],
  ["SUBSCRIBE", "c1", "d1"],
  ["PSUBSCRIBE", "c*"],
  ["SELECT", "0"],
  ["SELECT", "1"],
  ["CLIENT", "GETNAME"],
  ["CONFIG", "GET", "maxmemory"],
  ["SORT", "k1", "BY", "w_*"],
  ["EVAL", "return 1", "1", "x1"],
  ["ACL", "WHOAMI"],
);
const dryrun = cmd(lit("ACL"), lit("DRYRUN"), user, probe);

export const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: by(lit("A"), setuser) },
      { weight: 4, arbitrary: by(lit("A"), dryrun) },
      { weight: 2, arbitrary: by(lit("B"), cmd(lit("AUTH"), user, fc.constantFrom("pw", "wrong"))) },
      { weight: 4, arbitrary: by(lit("B"), probe) },
      { weight: 1, arbitrary: by(lit("A"), cmd(lit("ACL"), lit("DELUSER"), user)) },
      { weight: 1, arbitrary: by(lit("A"), cmd(lit("ACL"), lit("GETUSER"), user)) },
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((parts) => parts.flat());

/** The module commands svc has and Redis has not: no rule names them, but a description may. */
const svcOnly = (rule: string) => rule.slice(1).toLowerCase().startsWith("bf.");
const withoutSvcOnly = (text: string) =>
  text
    .split(" ")
    .filter((w) => !svcOnly(w))
    .join(" ");
const tidyRules = (text: string) => withoutSvcOnly(normaliseCommandRules(text, new Set()));
/** An ACL LIST line: its root rules and each selector normalised on their own. */
const tidyLine = (line: string) => withoutSvcOnly(normaliseAclLine(line, new Set()));

/** GETUSER's reply with its command rules in the order both servers agree on. */
function tidyUser(reply: RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  return reply.map((item, i) => {
    const key = reply[i - 1];
    if (key === "commands" && typeof item === "string") return tidyRules(item);
    if (key === "selectors" && Array.isArray(item)) return item.map(tidyUser);
    return item;
  });
}

/** The fields of an ACL LOG entry that do not depend on the moment or the connection. */
const logFields = new Set(["count", "reason", "context", "object", "username"]);

export const options: DuetOptions = {
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 2 },
  ],
  reset: [
    ["ACL", "DELUSER", ...users],
    ["ACL", "LOG", "RESET"],
    ["CONFIG", "SET", "acl-pubsub-default", "resetchannels"],
  ],
  normalise: (argv, reply) => (argv[0]?.toUpperCase() === "ACL" && argv[1]?.toUpperCase() === "GETUSER" ? tidyUser(reply) : reply),
  snapshot: async (c: RespClient) => {
    const lines = ((await c.call("ACL", "LIST")) as string[]).map(tidyLine);
    for (const name of users) lines.push(`${name}: ${JSON.stringify(tidyUser(await c.call("ACL", "GETUSER", name)))}`);
    const log = (await c.call("ACL", "LOG")) as RespValue[][];
    // Each entry is [field, value, …]: a pair is kept when its field is.
    for (const entry of log) lines.push(entry.filter((_, i) => logFields.has(String(entry[i - (i % 2)]))).join(" "));
    return lines;
  },
};
