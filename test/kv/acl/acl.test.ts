// ACL users side by side with redis-server 7.0.15: the same conversation with both servers must
// get the same replies — ACL SETUSER's rules and its errors, GETUSER and LIST, the other ACL
// subcommands, logging in as a user with AUTH and HELLO, what a limited user is refused (commands,
// keys, channels; queued in MULTI and called from scripts), ACL LOG, ACL DELUSER disconnecting the
// user, and requirepass as the default user's password; Redis 7's selectors, read and write key
// permissions (%R~, %W~) and first-argument rules.
//
// Each test writes down, per server, every command with its connection's name and its reply, and
// expects svc's transcript to equal redis-server's. A few replies differ by nature and are
// normalised first (see `tidy`): the order of single command rules in GETUSER and ACL LIST, the
// times and client details in ACL LOG, connection ids, and GENPASS's random passwords. And the
// two servers do not have quite the same commands: where a reply names commands (ACL CAT
// <category>, single command rules), those only one server has are left out, as Redis has no
// answer to compare about svc's extra commands and svc none about the ones it lacks.
import { beforeAll, describe, expect, test } from "bun:test";
import { normaliseCommandRules as normaliseRules } from "../support/acl-rules.ts";
import { RespClient, type RespValue, show } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** How long a reply may take before the transcript says none came (rather than the test timing out with no transcript). */
const REPLY_LIMIT_MS = 5_000;
/** The fields of an ACL LOG entry compared: age-seconds and client-info differ between two servers by nature. */
const LOG_FIELDS = new Set(["count", "reason", "context", "object", "username"]);
/** ACL GENPASS's default size: 256 bits, 64 hex digits. */
const DEFAULT_GENPASS_HEX_DIGITS = 64;

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/**
 * Commands (and container|subcommands) in one server's COMMAND LIST and not the other's, lower
 * case: svc has no cluster, module, replication or latency commands and a few others Redis has,
 * and has its Bloom filter commands and two CLIENT subcommands of Redis 7.2 that Redis 7.0 lacks.
 */
const commandsOnlyIn = { redis: new Set<string>(), kv: new Set<string>() };

beforeAll(async () => {
  // Runs after the servers have started: side-by-side's hook was registered first.
  const commandNames = async (c: RespClient) => new Set(((await c.call("COMMAND", "LIST")) as string[]).map((n) => n.toLowerCase()));
  const [redisNames, kvNames] = await Promise.all([commandNames(servers.redisClient), commandNames(servers.kvClient)]);
  for (const n of redisNames) if (!kvNames.has(n)) commandsOnlyIn.redis.add(n);
  for (const n of kvNames) if (!redisNames.has(n)) commandsOnlyIn.kv.add(n);
});

// ---------------------------------------------------------------------------------------------
// Normalisations

/** Command rules with their single rules sorted, svc's own commands left out (support/acl-rules.ts). */
const normaliseCommandRules = (text: string, leaveOut: ReadonlySet<string> = commandsOnlyIn.kv) => normaliseRules(text, leaveOut);

/** Applies `change` to the value after each `key` of a flat [key, value, ...] reply (RESP2's maps). */
function mapValues(reply: RespValue, change: (key: string, value: RespValue) => RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  return reply.map((item, i) => (i % 2 === 1 && typeof reply[i - 1] === "string" ? change(reply[i - 1] as string, item) : item));
}

/** ACL GETUSER's reply with its command rules normalised (a selector's too, should one appear). */
function tidyUser(reply: RespValue): RespValue {
  return mapValues(reply, (key, value) => {
    if (key === "commands" && typeof value === "string") return normaliseCommandRules(value);
    if (key === "selectors" && Array.isArray(value)) return value.map(tidyUser);
    return value;
  });
}

/** An ACL LOG entry cut down to the fields that do not depend on the moment or the connection. */
function tidyLogEntry(entry: RespValue): RespValue {
  if (!Array.isArray(entry)) return entry;
  const kept: RespValue[] = [];
  for (let i = 0; i + 1 < entry.length; i += 2) if (LOG_FIELDS.has(String(entry[i]))) kept.push(entry[i]!, entry[i + 1]!);
  return kept;
}

/** HELLO's reply names the connection's id, which differs between two servers by design. */
function withoutId(reply: RespValue): RespValue {
  if (reply !== null && typeof reply === "object" && !Array.isArray(reply) && "map" in reply) return { map: withoutId(reply.map) as RespValue[] };
  return mapValues(reply, (key, value) => (key === "id" ? "<id>" : value));
}

/** CLIENT LIST's lines cut down to their user= field: the rest (addresses, ids, memory) differs. */
function userFields(reply: RespValue): RespValue {
  if (typeof reply !== "string") return reply;
  return reply
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => /(?:^| )user=(\S*)/.exec(line)?.[1] ?? "(no user= field)");
}

/** ACL HELP: its first line and the subcommands it lists (the lines that are not indented). */
function helpOutline(reply: RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  // Help lines are status replies.
  const lines = reply.map((item) => (item !== null && typeof item === "object" && "s" in item ? item.s : show(item)));
  return [
    lines[0]!,
    ...lines
      .slice(1)
      .filter((line) => !line.startsWith(" "))
      .map((line) => line.split(" ")[0]!),
  ];
}

/** A reply as the transcripts compare it: the same as sent, except where it differs by nature. */
function tidy(argv: readonly string[], reply: RespValue): RespValue {
  const [name, sub, arg] = argv.map((a) => a.toUpperCase());
  if (name === "ACL" && sub === "GETUSER") return tidyUser(reply);
  if (name === "ACL" && sub === "LIST" && Array.isArray(reply)) return reply.map((line) => (typeof line === "string" ? normaliseCommandRules(line) : line));
  if (name === "ACL" && sub === "LOG" && arg !== "RESET" && Array.isArray(reply)) return reply.map(tidyLogEntry);
  // A random password: only its length and that it is lowercase hex can be compared.
  if (name === "ACL" && sub === "GENPASS" && typeof reply === "string" && /^[0-9a-f]*$/.test(reply)) return `<${reply.length} hex digits>`;
  if (name === "ACL" && sub === "HELP") return helpOutline(reply);
  if (name === "HELLO") return withoutId(reply);
  if (name === "CLIENT" && sub === "LIST") return userFields(reply);
  return reply;
}

// ---------------------------------------------------------------------------------------------
// Conversations

/** What came back for a command: a reply, or the server closing the connection, or nothing in time. */
type Outcome = RespValue | { closed: true } | { noReplyWithinMs: number };

/** The next reply to `argv` on `c`, or that the connection closed first, or that none came in time. */
async function replyOrClose(c: RespClient, argv: readonly string[]): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve({ noReplyWithinMs: REPLY_LIMIT_MS }), REPLY_LIMIT_MS)));
  try {
    return await Promise.race([c.call(...argv), c.closed.then((): Outcome => ({ closed: true })), late]);
  } finally {
    clearTimeout(timer);
  }
}

const isReply = (o: Outcome): o is RespValue => o === null || typeof o !== "object" || !("closed" in o || "noReplyWithinMs" in o);

/** One server's half of a test: its connections, each with a name, and the transcript of what they were answered. */
class Scene {
  readonly lines: string[] = [];
  private readonly names = new Map<RespClient, string>();
  private readonly ids = new Map<RespClient, string>();

  constructor(
    readonly port: number,
    readonly adminClient: RespClient,
  ) {
    this.names.set(adminClient, "admin");
  }

  /** A command on the shared connection of the default user, which may run anything. */
  admin(...argv: string[]): Promise<Outcome> {
    return this.on(this.adminClient, ...argv);
  }

  /** A fresh connection, not logged in as anyone yet; `name` labels it in the transcript. */
  async connect(name: string): Promise<RespClient> {
    const c = await RespClient.connect(this.port);
    this.names.set(c, name);
    // Its id, asked now (as the default user) because the user it logs in as may not ask.
    const id = await c.call("CLIENT", "ID");
    if (typeof id === "bigint") this.ids.set(c, String(id));
    return c;
  }

  /** A fresh connection logged in with AUTH `user` `password`; the AUTH is written down. */
  async login(user: string, password: string, name = user): Promise<RespClient> {
    const c = await this.connect(name);
    await this.on(c, "AUTH", user, password);
    return c;
  }

  /** Runs a command on `c` and writes down `name command -> reply`, the reply normalised. */
  async on(c: RespClient, ...argv: string[]): Promise<Outcome> {
    const outcome = await replyOrClose(c, argv);
    this.note(`${this.names.get(c)} ${argv.join(" ")} -> ${isReply(outcome) ? show(tidy(argv, outcome)) : JSON.stringify(outcome)}`);
    return outcome;
  }

  /** CLIENT LIST ID <c's own id>, run on `c` itself; the id is left out of the transcript, which differs. */
  async ownClientListUser(c: RespClient): Promise<void> {
    const reply = await replyOrClose(c, ["CLIENT", "LIST", "ID", this.ids.get(c) ?? "(unknown id)"]);
    this.note(`${this.names.get(c)} CLIENT LIST ID <own id> -> ${isReply(reply) ? show(userFields(reply)) : JSON.stringify(reply)}`);
  }

  note(line: string): void {
    this.lines.push(line);
  }

  closeConnections(): void {
    for (const c of this.names.keys()) if (c !== this.adminClient) c.close();
  }
}

/** Deletes every user but default, so that each test starts with the server's users as they were. */
async function deleteOtherUsers(admin: RespClient): Promise<void> {
  const users = await admin.call("ACL", "USERS");
  const others = Array.isArray(users) ? users.filter((u): u is string => typeof u === "string" && u !== "default") : [];
  if (others.length > 0) await admin.call("ACL", "DELUSER", ...others);
}

async function play(port: number, admin: RespClient, body: (s: Scene) => Promise<void>): Promise<string[]> {
  const scene = new Scene(port, admin);
  await admin.call("ACL", "LOG", "RESET");
  try {
    await body(scene);
  } finally {
    scene.closeConnections();
    await deleteOtherUsers(admin);
  }
  return scene.lines;
}

/** Plays `body` against each server and expects svc's transcript to equal redis-server's; returns redis-server's. */
async function sameOnBoth(body: (s: Scene) => Promise<void>): Promise<string[]> {
  const [fromRedis, fromKv] = await Promise.all([play(servers.redis.port, servers.redisClient, body), play(servers.kv.port, servers.kvClient, body)]);
  expect(fromKv).toEqual(fromRedis);
  return fromRedis;
}

/** The line a transcript holds for `name argv -> reply`, for checking that Redis answered as a test expects. */
const line = (name: string, argv: string, reply: RespValue): string => `${name} ${argv} -> ${show(reply)}`;

const setuserError = (rule: string, why: string) => ({ e: `ERR Error in ACL SETUSER modifier '${rule}': ${why}` });

// ---------------------------------------------------------------------------------------------

describe("the normalisation of command rules", () => {
  test("keeps the category part in order and sorts the single rules after it", () => {
    expect(normaliseCommandRules("-@all +@hash +@read +set -hset +get")).toBe("-@all +@hash +@read +get +set -hset");
    expect(normaliseCommandRules("user u on #ab ~k* resetchannels &c* +@all -@read +get")).toBe("user u on #ab ~k* resetchannels &c* +@all -@read +get");
    expect(normaliseCommandRules("+@all -@read +get")).not.toBe(normaliseCommandRules("+@all +get -@read"));
    expect(normaliseCommandRules("-@all")).toBe("-@all");
    expect(normaliseCommandRules("+@all -@write -bf.add +set -get", new Set(["bf.add"]))).toBe("+@all -@write +set -get");
  });
});

describe("ACL SETUSER, GETUSER and LIST", () => {
  test("a new user with no rules, then on/off, the password rules and the payload-sanitizing flags", async () => {
    const pw = "s3cret";
    await sameOnBoth(async (s) => {
      const steps = [
        [],
        ["on"],
        ["off"],
        ["on", `>${pw}`],
        [">other"],
        [`<${pw}`],
        [`#${sha256("hashed")}`],
        [`!${sha256("hashed")}`],
        [">"],
        ["nopass"],
        [">again"],
        ["resetpass"],
        ["nopass", `>${pw}`],
        ["on", `>${pw}`, `>${pw}`],
        ["SKIP-SANITIZE-PAYLOAD"],
        ["sanitize-payload"],
      ];
      for (const rules of steps) {
        await s.admin("ACL", "SETUSER", "pw-user", ...rules);
        await s.admin("ACL", "GETUSER", "pw-user");
      }
      await s.admin("ACL", "LIST");
      await s.admin("ACL", "DELUSER", "pw-user");
    });
  });

  test("key and channel patterns: ~pattern, allkeys, resetkeys, &pattern, allchannels, resetchannels", async () => {
    await sameOnBoth(async (s) => {
      const steps = [
        ["~k*"],
        ["~other:*", "~"],
        ["allkeys"],
        ["resetkeys", "~a", "~*"],
        ["resetkeys"],
        ["&ch*"],
        ["&news:?"],
        ["allchannels"],
        ["resetchannels", "&x", "&*"],
        ["resetchannels"],
        ["~k*", "&c*"],
      ];
      for (const rules of steps) {
        await s.admin("ACL", "SETUSER", "pattern-user", ...rules);
        await s.admin("ACL", "GETUSER", "pattern-user");
      }
      await s.admin("ACL", "LIST");
      await s.admin("ACL", "DELUSER", "pattern-user");
    });
  });

  test("command rules: commands, categories, container|subcommand, allcommands, nocommands", async () => {
    await sameOnBoth(async (s) => {
      const steps = [
        ["+get"],
        ["+SET", "+Get"],
        ["-get"],
        ["+@hash"],
        ["-hset"],
        ["-@hash"],
        ["+@string", "-@write"],
        ["allcommands"],
        ["-@dangerous"],
        ["+config"],
        ["nocommands"],
        ["+client|list"],
        ["+client"],
        ["-client|kill"],
        ["+@all", "-config|set"],
        ["-@all"],
        ["+config|get", "+config|set"],
        ["-config"],
        ["+@read", "+@write", "-@read"],
        ["nocommands", "+@pubsub", "-publish"],
      ];
      for (const rules of steps) {
        await s.admin("ACL", "SETUSER", "cmd-user", ...rules);
        await s.admin("ACL", "GETUSER", "cmd-user");
      }
      await s.admin("ACL", "LIST");
      await s.admin("ACL", "DELUSER", "cmd-user");
    });
  });

  test("several users at once, described with categories first, in ACL LIST's sorted order", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "mix-a", "on", ">pa", "~k*", "&ch*", "+get", "+set", "+@hash", "-hset", "+client|list", "-@dangerous");
      await s.admin("ACL", "SETUSER", "mix-b", "on", "nopass", "allkeys", "allchannels", "allcommands", "-@write", "+set");
      await s.admin("ACL", "SETUSER", "mix-c", "+@all", "-@dangerous", "+config");
      // Categories that overlap, so that describing the user means choosing among them as Redis does.
      await s.admin("ACL", "SETUSER", "mix-d", "+@all", "-@write", "-@dangerous", "+@string", "-get");
      for (const user of ["mix-a", "mix-b", "mix-c", "mix-d"]) await s.admin("ACL", "GETUSER", user);
      await s.admin("ACL", "LIST");
      await s.admin("ACL", "USERS");
    });
    expect(lines).toContain(
      line("admin", "ACL GETUSER mix-a", [
        "flags",
        ["on"],
        "passwords",
        [sha256("pa")],
        "commands",
        "-@all +@hash +get +set -hset",
        "keys",
        "~k*",
        "channels",
        "&ch*",
        "selectors",
        [],
      ]),
    );
  });

  test("reset takes a user back to a new user's rules", async () => {
    await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "reset-user", "on", ">pw", "nopass", "~*", "&*", "+@all", "-get");
      await s.admin("ACL", "GETUSER", "reset-user");
      await s.admin("ACL", "SETUSER", "reset-user", "reset");
      await s.admin("ACL", "GETUSER", "reset-user");
      await s.admin("ACL", "SETUSER", "reset-user", "on", "+get", "reset", "~k");
      await s.admin("ACL", "GETUSER", "reset-user");
      await s.admin("ACL", "LIST");
      await s.admin("ACL", "DELUSER", "reset-user");
    });
  });

  test("a bad rule is named in the error and changes nothing, even after good rules in the same call", async () => {
    const badRules = [
      "badrule",
      "+nosuch",
      "+@nosuch",
      "-@nosuch",
      "+client|nosuch",
      "-client|list|x",
      "+@read|x",
      "<nopw",
      `!${sha256("nopw")}`,
      "#abc",
      "!abc",
      `#${sha256("x").toUpperCase()}`,
      "allkeys ~c",
      "allchannels &c",
      "-select|0",
      "-get|x",
    ];
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "bad-user", "on", ">pw", "~k*", "&c*", "+get");
      for (const bad of badRules) {
        await s.admin("ACL", "SETUSER", "bad-user", "off", "resetpass", "+set", "resetkeys", ...bad.split(" "));
        await s.admin("ACL", "GETUSER", "bad-user");
      }
      // A user a failed call would have made is not made.
      await s.admin("ACL", "SETUSER", "never-made", "on", "badrule");
      await s.admin("ACL", "GETUSER", "never-made");
      await s.admin("ACL", "SETUSER", "has space", "on");
      await s.admin("ACL", "SETUSER", "has\0null", "on");
      await s.admin("ACL", "SETUSER");
      await s.admin("ACL", "GETUSER");
      await s.admin("ACL", "GETUSER", "a", "b");
      await s.admin("ACL", "USERS");
    });
    expect(lines).toContain(line("admin", "ACL SETUSER bad-user off resetpass +set resetkeys badrule", setuserError("badrule", "Syntax error")));
    expect(lines).toContain(
      line("admin", "ACL SETUSER bad-user off resetpass +set resetkeys +@nosuch", setuserError("+@nosuch", "Unknown command or category name in ACL")),
    );
    expect(lines).toContain(
      line(
        "admin",
        "ACL SETUSER bad-user off resetpass +set resetkeys <nopw",
        setuserError("<nopw", "The password you are trying to remove from the user does not exist"),
      ),
    );
    expect(lines).toContain(
      line(
        "admin",
        "ACL SETUSER bad-user off resetpass +set resetkeys #abc",
        setuserError("#abc", "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
      ),
    );
    expect(lines).toContain(line("admin", "ACL SETUSER has space on", { e: "ERR Usernames can't contain spaces or null characters" }));
  });
});

describe("ACL's other subcommands", () => {
  test("DELUSER counts the users it deleted and will not delete default; USERS and WHOAMI", async () => {
    await sameOnBoth(async (s) => {
      for (const user of ["del-a", "del-b", "del-c"]) await s.admin("ACL", "SETUSER", user);
      await s.admin("ACL", "USERS");
      await s.admin("ACL", "DELUSER", "del-a", "del-a", "nosuch");
      await s.admin("ACL", "DELUSER", "nosuch");
      await s.admin("ACL", "DELUSER", "default");
      // default among others: nothing is deleted.
      await s.admin("ACL", "DELUSER", "del-b", "default");
      await s.admin("ACL", "USERS");
      await s.admin("ACL", "DELUSER", "del-b", "del-c");
      await s.admin("ACL", "DELUSER");
      await s.admin("ACL", "USERS");
      await s.admin("ACL", "USERS", "x");
      await s.admin("ACL", "WHOAMI");
      await s.admin("ACL", "WHOAMI", "x");
    });
  });

  test("CAT lists the categories; an unknown category and extra arguments are errors", async () => {
    await sameOnBoth(async (s) => {
      await s.admin("ACL", "CAT");
      await s.admin("ACL", "CAT", "nosuch");
      await s.admin("ACL", "CAT", "read", "extra");
    });
  });

  test("CAT <category> names the same commands, over the commands both servers have", async () => {
    const categories = (await servers.redisClient.call("ACL", "CAT")) as string[];
    const fromRedis: Record<string, string[]> = {};
    const fromKv: Record<string, string[]> = {};
    // Each list without the commands only its own server has (see commandsOnlyIn); and sorted,
    // as Redis lists a category in its command table's order, which is hash order.
    const comparable = (reply: RespValue, onlyHere: ReadonlySet<string>) =>
      Array.isArray(reply)
        ? reply
            .map(String)
            .filter((n) => !onlyHere.has(n))
            .sort()
        : [show(reply)];
    for (const category of categories) {
      const [r, k] = await Promise.all([servers.redisClient.call("ACL", "CAT", category), servers.kvClient.call("ACL", "CAT", category)]);
      fromRedis[category] = comparable(r, commandsOnlyIn.redis);
      fromKv[category] = comparable(k, commandsOnlyIn.kv);
    }
    expect(fromKv).toEqual(fromRedis);
    expect(fromRedis.read).toContain("get");
    // A category's name in upper case names it too.
    const [upper, lower] = await Promise.all([servers.kvClient.call("ACL", "CAT", "READ"), servers.kvClient.call("ACL", "CAT", "read")]);
    expect(upper).toEqual(lower);
  });

  test("GENPASS: 256 bits by default, as many bits as asked rounded up to hex digits, and its errors", async () => {
    const lines = await sameOnBoth(async (s) => {
      for (const bits of [[], ["32"], ["1"], ["4"], ["5"], ["4096"], ["0"], ["4097"], ["-1"], ["abc"], ["1", "2"]]) await s.admin("ACL", "GENPASS", ...bits);
    });
    expect(lines).toContain(line("admin", "ACL GENPASS", `<${DEFAULT_GENPASS_HEX_DIGITS} hex digits>`));
    expect(lines).toContain(line("admin", "ACL GENPASS 32", "<8 hex digits>"));
  });

  test("two GENPASS replies differ", async () => {
    for (const c of [servers.redisClient, servers.kvClient]) expect(await c.call("ACL", "GENPASS")).not.toEqual(await c.call("ACL", "GENPASS"));
  });

  test("HELP, SAVE and LOAD without an ACL file, an unknown subcommand, ACL alone", async () => {
    await sameOnBoth(async (s) => {
      await s.admin("ACL", "HELP");
      await s.admin("ACL", "SAVE");
      await s.admin("ACL", "LOAD");
      await s.admin("ACL", "NOSUCH");
      await s.admin("ACL");
    });
  });

  test("DRYRUN: OK, or why the user may not run the command; unknown users and commands are errors", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "dry", "on", "nopass", "~k*", "&ch*", "+get", "+publish", "+subscribe", "+psubscribe", "+client|list");
      const runs = [
        ["GET", "k1"],
        ["get", "x"],
        ["SET", "k1", "v"],
        ["PUBLISH", "ch1", "m"],
        ["PUBLISH", "x", "m"],
        ["SUBSCRIBE", "ch1"],
        ["SUBSCRIBE", "ch1", "x"],
        ["PSUBSCRIBE", "ch*"],
        ["PSUBSCRIBE", "ch1"],
        ["CLIENT", "LIST"],
        ["CLIENT", "KILL", "ID", "1"],
        ["NOSUCH", "k"],
        ["GET"],
        ["CLIENT", "NOSUCH"],
      ];
      for (const argv of runs) await s.admin("ACL", "DRYRUN", "dry", ...argv);
      await s.admin("ACL", "DRYRUN", "nosuch", "GET", "k");
      await s.admin("ACL", "DRYRUN", "dry");
      await s.admin("ACL", "DRYRUN", "default", "FLUSHALL");
      // A dry run is not a denial: nothing is logged.
      await s.admin("ACL", "LOG");
    });
    expect(lines).toContain(line("admin", "ACL DRYRUN dry get x", "This user has no permissions to access the 'x' key"));
    expect(lines).toContain(line("admin", "ACL DRYRUN dry SET k1 v", "This user has no permissions to run the 'set' command"));
    expect(lines).toContain(line("admin", "ACL DRYRUN dry PUBLISH x m", "This user has no permissions to access the 'x' channel"));
  });
});

describe("logging in as a user", () => {
  test("AUTH username password: the right password, a wrong one, an unknown user, a user that is off, a nopass user", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "alice", "on", ">alice-pw", "+@all", "~*", "&*");
      await s.admin("ACL", "SETUSER", "sleeper", "off", ">sleeper-pw", "+@all", "~*");
      await s.admin("ACL", "SETUSER", "anyone", "on", "nopass", "+@all", "~*");
      const c = await s.connect("c");
      for (const [user, password] of [
        ["alice", "wrong"],
        ["nobody", "alice-pw"],
        ["sleeper", "sleeper-pw"],
        ["alice", "alice-pw"],
      ]) {
        await s.on(c, "AUTH", user!, password!);
        await s.on(c, "ACL", "WHOAMI");
      }
      // A failed AUTH leaves the connection logged in as it was.
      await s.on(c, "AUTH", "alice", "wrong");
      await s.on(c, "ACL", "WHOAMI");
      await s.on(c, "AUTH", "anyone", "whatever");
      await s.on(c, "ACL", "WHOAMI");
      await s.on(c, "AUTH", "anyone", "");
      // Turning a user off refuses new logins; in Redis 7.0 its connections stay logged in.
      await s.admin("ACL", "SETUSER", "anyone", "off");
      await s.on(c, "PING");
      await s.on(c, "ACL", "WHOAMI");
      await s.on(c, "AUTH", "anyone", "whatever");
      await s.on(c, "AUTH", "default", "anything");
    });
    expect(lines).toContain(line("c", "AUTH sleeper sleeper-pw", { e: "WRONGPASS invalid username-password pair or user is disabled." }));
  });

  test("HELLO 2 and HELLO 3 with AUTH username password", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "helen", "on", ">helen-pw", "+@all", "~*", "&*");
      await s.admin("ACL", "SETUSER", "helen-off", "off", ">helen-pw", "+@all");
      await s.admin("ACL", "SETUSER", "helen-any", "on", "nopass", "+@all");
      for (const protocol of ["2", "3"]) {
        const c = await s.connect(`resp${protocol}`);
        for (const [user, password] of [
          ["helen", "wrong"],
          ["nobody", "x"],
          ["helen-off", "helen-pw"],
          ["helen", "helen-pw"],
        ]) {
          await s.on(c, "HELLO", protocol, "AUTH", user!, password!);
          await s.on(c, "ACL", "WHOAMI");
        }
        await s.on(c, "HELLO", protocol, "AUTH", "helen-any", "anything", "SETNAME", "named");
        await s.on(c, "ACL", "WHOAMI");
        await s.on(c, "CLIENT", "GETNAME");
      }
    });
    expect(lines).toContain(line("resp3", "HELLO 3 AUTH helen wrong", { e: "WRONGPASS invalid username-password pair or user is disabled." }));
  });
});

describe("a limited user's connection", () => {
  /** Keys k*, channels ch*, a few commands; and a connection logged in as that user. */
  async function limitedUser(s: Scene, name: string, ...more: string[]): Promise<RespClient> {
    await s.admin("ACL", "SETUSER", name, "on", ">pw", "~k*", "&ch*", "+get", "+set", "+mget", "+client|list", "+acl|whoami", ...more);
    return s.login(name, "pw");
  }

  test("commands it may not run are refused with NOPERM naming the command or container|subcommand; the others run", async () => {
    const lines = await sameOnBoth(async (s) => {
      const u = await limitedUser(s, "limited-cmd", "+config|get");
      const runs = [
        ["SET", "k1", "v"],
        ["GET", "k1"],
        ["DEL", "k1"],
        ["del", "k1"],
        ["CLIENT", "KILL", "ID", "1"],
        ["CONFIG", "SET", "maxmemory", "0"],
        ["CONFIG", "GET", "maxmemory"],
        ["FLUSHALL"],
        ["DEL"],
        ["NOSUCHCOMMAND"],
        ["CLIENT", "NOSUCH"],
        ["ACL", "USERS"],
        ["ACL", "WHOAMI"],
      ];
      for (const argv of runs) await s.on(u, ...argv);
      await s.ownClientListUser(u);
      // AUTH, HELLO and QUIT need no permission.
      await s.on(u, "AUTH", "limited-cmd", "pw");
      await s.on(u, "HELLO", "2");
      await s.on(u, "QUIT");
      await s.admin("GET", "k1");
      await s.admin("DEL", "k1");
    });
    expect(lines).toContain(line("limited-cmd", "DEL k1", { e: "NOPERM this user has no permissions to run the 'del' command" }));
    expect(lines).toContain(line("limited-cmd", "CLIENT KILL ID 1", { e: "NOPERM this user has no permissions to run the 'client|kill' command" }));
    expect(lines).toContain(line("limited-cmd", "CLIENT LIST ID <own id>", ["limited-cmd"]));
  });

  test("keys that match none of its patterns are refused", async () => {
    const lines = await sameOnBoth(async (s) => {
      const u = await limitedUser(s, "limited-keys", "+rename", "+dbsize");
      for (const argv of [
        ["SET", "k1", "a"],
        ["SET", "x", "b"],
        ["GET", "x"],
        ["MGET", "k1", "k2"],
        ["MGET", "k1", "x"],
        ["RENAME", "k1", "x"],
        ["RENAME", "k1", "k2"],
        ["GET", "k2"],
      ]) {
        await s.on(u, ...argv);
      }
      // Commands that take no key are not refused for keys, whatever they return.
      await s.admin("SET", "x", "secret");
      await s.on(u, "DBSIZE");
      await s.admin("DEL", "k1", "k2", "x");
    });
    expect(lines).toContain(line("limited-keys", "GET x", { e: "NOPERM this user has no permissions to access one of the keys used as arguments" }));
  });

  test("channels: PUBLISH, SUBSCRIBE and PSUBSCRIBE outside its patterns are refused; a pattern must be one of its own", async () => {
    const lines = await sameOnBoth(async (s) => {
      const u = await limitedUser(s, "limited-ch", "+publish", "+subscribe", "+psubscribe", "+unsubscribe", "+punsubscribe");
      for (const argv of [
        ["PUBLISH", "x", "m"],
        ["PUBLISH", "ch1", "m"],
        ["SUBSCRIBE", "x"],
        ["SUBSCRIBE", "ch1", "x"],
        ["PSUBSCRIBE", "ch1"],
        ["PSUBSCRIBE", "c*"],
        ["PSUBSCRIBE", "*"],
      ]) {
        await s.on(u, ...argv);
      }
      await s.on(u, "SUBSCRIBE", "ch1");
      await s.on(u, "PSUBSCRIBE", "ch*");
      await s.on(u, "SUBSCRIBE", "x");
      await s.on(u, "UNSUBSCRIBE");
      await s.on(u, "PUNSUBSCRIBE");
    });
    expect(lines).toContain(line("limited-ch", "PUBLISH x m", { e: "NOPERM this user has no permissions to access one of the channels used as arguments" }));
    expect(lines).toContain(line("limited-ch", "PSUBSCRIBE c*", { e: "NOPERM this user has no permissions to access one of the channels used as arguments" }));
  });

  test("taking channels away disconnects the user's subscribers that may no longer listen, and only them", async () => {
    await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "listener", "on", ">pw", "~*", "&news*", "+@all");
      const plain = await s.login("listener", "pw", "plain");
      const byName = await s.login("listener", "pw", "by-name");
      const byPattern = await s.login("listener", "pw", "by-pattern");
      await s.on(byName, "SUBSCRIBE", "news1");
      await s.on(byPattern, "PSUBSCRIBE", "news*");
      await s.admin("ACL", "SETUSER", "listener", "resetchannels", "&news1");
      for (const c of [plain, byName, byPattern]) await s.on(c, "PING");
      await s.admin("ACL", "SETUSER", "listener", "resetchannels");
      for (const c of [plain, byName]) await s.on(c, "PING");
    });
  });

  test("in MULTI a refused command is refused when queued and EXEC answers EXECABORT", async () => {
    const lines = await sameOnBoth(async (s) => {
      const u = await limitedUser(s, "limited-multi", "+multi", "+exec", "+discard");
      for (const argv of [["MULTI"], ["SET", "k1", "v"], ["GET", "x"], ["DEL", "k1"], ["EXEC"], ["GET", "k1"]]) await s.on(u, ...argv);
      // Rules changed while a transaction waits: EXEC refuses what the user may no longer run.
      for (const argv of [["MULTI"], ["SET", "k1", "v2"], ["GET", "k1"]]) await s.on(u, ...argv);
      await s.admin("ACL", "SETUSER", "limited-multi", "-set");
      await s.on(u, "EXEC");
      await s.on(u, "GET", "k1");
      await s.admin("ACL", "LOG");
    });
    expect(lines).toContain(line("limited-multi", "EXEC", { e: "EXECABORT Transaction discarded because of previous errors." }));
  });

  test("in a script redis.call and redis.pcall of a refused command, key or channel fail as Redis words it", async () => {
    const lines = await sameOnBoth(async (s) => {
      const u = await limitedUser(s, "limited-lua", "+eval", "+publish");
      await s.admin("SET", "k1", "v1");
      const scripts = [
        ["return redis.call('GET', KEYS[1])", "1", "k1"],
        ["return redis.call('DEL', KEYS[1])", "1", "k1"],
        ["return redis.pcall('DEL', KEYS[1])", "1", "k1"],
        ["return redis.call('GET', ARGV[1])", "0", "x"],
        ["return redis.pcall('GET', ARGV[1])", "0", "x"],
        ["return redis.call('GET', KEYS[1])", "1", "x"],
        ["return redis.call('PUBLISH', ARGV[1], 'm')", "0", "x"],
        ["return redis.call('PUBLISH', ARGV[1], 'm')", "0", "ch1"],
        ["return redis.call('CONFIG', 'SET', 'maxmemory', '0')", "0"],
      ];
      for (const script of scripts) await s.on(u, "EVAL", ...script);
      await s.admin("GET", "k1");
      await s.admin("DEL", "k1");
      await s.admin("ACL", "LOG");
    });
    expect(lines).toContain(
      line("limited-lua", "EVAL return redis.call('GET', KEYS[1]) 1 x", {
        e: "NOPERM this user has no permissions to access one of the keys used as arguments",
      }),
    );
  });
});

describe("ACL LOG", () => {
  test("logs each denial with its reason and context, newest first; a repeat adds to its entry and brings it to the front", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "logged", "on", ">pw", "~k*", "&ch*", "+get", "+publish", "+multi", "+exec", "+eval");
      const u = await s.login("logged", "pw");
      for (const argv of [
        ["DEL", "k"],
        ["GET", "x"],
        ["PUBLISH", "x", "m"],
        ["CLIENT", "KILL", "ID", "1"],
      ])
        await s.on(u, ...argv);
      for (const argv of [["MULTI"], ["DEL", "k"], ["GET", "y"], ["EXEC"]]) await s.on(u, ...argv);
      await s.on(u, "EVAL", "return redis.pcall('DEL', 'k')", "0");
      await s.on(u, "EVAL", "return redis.pcall('GET', 'x')", "0");
      // A repeat within a minute adds to the entry and brings it to the front.
      await s.on(u, "DEL", "k");
      await s.admin("ACL", "LOG");
      await s.admin("ACL", "LOG", "1");
      await s.admin("ACL", "LOG", "0");
      await s.admin("ACL", "LOG", "-1");
      await s.admin("ACL", "LOG", "x");
      await s.admin("ACL", "LOG", "RESET");
      await s.admin("ACL", "LOG");
    });
    expect(lines).toContain(line("admin", "ACL LOG 1", [["count", 2n, "reason", "command", "context", "toplevel", "object", "del", "username", "logged"]]));
  });

  test("a failed AUTH or HELLO AUTH is logged with reason auth, the command as typed and the name tried", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin("ACL", "SETUSER", "victim", "on", ">pw", "+@all");
      const c = await s.connect("c");
      for (const argv of [
        ["AUTH", "victim", "wrong"],
        ["auth", "nobody", "x"],
        ["Auth", "nobody", "x"],
        ["HELLO", "3", "AUTH", "victim", "nope"],
        ["AUTH", "victim", "pw"],
      ]) {
        await s.on(c, ...argv);
      }
      await s.admin("ACL", "LOG");
    });
    expect(lines).toContain(
      line("admin", "ACL LOG", [
        ["count", 1n, "reason", "auth", "context", "toplevel", "object", "HELLO", "username", "victim"],
        ["count", 1n, "reason", "auth", "context", "toplevel", "object", "Auth", "username", "nobody"],
        ["count", 1n, "reason", "auth", "context", "toplevel", "object", "auth", "username", "nobody"],
        ["count", 1n, "reason", "auth", "context", "toplevel", "object", "AUTH", "username", "victim"],
      ]),
    );
  });
});

test("ACL DELUSER disconnects the deleted user's connections, and only theirs", async () => {
  const lines = await sameOnBoth(async (s) => {
    await s.admin("ACL", "SETUSER", "doomed", "on", ">pw", "~*", "&*", "+@all");
    await s.admin("ACL", "SETUSER", "survivor", "on", ">pw", "~*", "&*", "+@all");
    const first = await s.login("doomed", "pw", "doomed-1");
    const second = await s.login("doomed", "pw", "doomed-2");
    const other = await s.login("survivor", "pw");
    await s.on(first, "PING");
    await s.admin("ACL", "DELUSER", "doomed");
    for (const c of [first, second, other]) await s.on(c, "PING");
    await s.on(other, "ACL", "WHOAMI");
    await s.admin("ACL", "USERS");
  });
  expect(lines).toContain('doomed-2 PING -> {"closed":true}');
});

test("SORT's BY pattern and GET need every key: refused to a user limited to some, as Redis words it", async () => {
  await sameOnBoth(async (s) => {
    await s.admin("ACL", "SETUSER", "sorter", "on", ">pw", "~k*", "+@all");
    await s.admin("DEL", "k1");
    await s.admin("RPUSH", "k1", "3", "1", "2");
    const sorter = await s.login("sorter", "pw");
    for (const argv of [
      ["SORT", "k1"],
      ["SORT", "k1", "BY", "nosort"],
      ["SORT", "k1", "BY", "w_*"],
      ["SORT", "k1", "GET", "#"],
      ["SORT_RO", "k1", "GET", "k_*"],
    ]) {
      await s.on(sorter, ...argv);
    }
    await s.admin("ACL", "SETUSER", "sorter", "allkeys");
    await s.on(sorter, "SORT", "k1", "BY", "w_*", "GET", "#");
    await s.admin("DEL", "k1");
  });
});

test("CLIENT KILL USER disconnects that user's connections, and names an unknown user", async () => {
  const lines = await sameOnBoth(async (s) => {
    await s.admin("ACL", "SETUSER", "kicked", "on", ">pw", "~*", "&*", "+@all");
    await s.admin("ACL", "SETUSER", "staying", "on", ">pw", "~*", "&*", "+@all");
    const first = await s.login("kicked", "pw", "kicked-1");
    const second = await s.login("kicked", "pw", "kicked-2");
    const other = await s.login("staying", "pw");
    await s.admin("CLIENT", "KILL", "USER", "nosuch");
    await s.admin("CLIENT", "KILL", "USER", "kicked");
    for (const c of [first, second, other]) await s.on(c, "PING");
    await s.admin("CLIENT", "KILL", "USER", "kicked");
  });
  expect(lines).toContain('admin CLIENT KILL USER kicked -> ":2"');
  expect(lines).toContain('kicked-1 PING -> {"closed":true}');
});

test("CONFIG SET requirepass sets the default user's password; an empty one makes it nopass again", async () => {
  const password = "req-pass";
  const lines = await sameOnBoth(async (s) => {
    try {
      await s.admin("CONFIG", "SET", "requirepass", password);
      await s.admin("ACL", "GETUSER", "default");
      await s.admin("ACL", "LIST");
      const fresh = await s.connect("fresh");
      await s.on(fresh, "PING");
      await s.on(fresh, "AUTH", "wrong");
      await s.on(fresh, "AUTH", password);
      await s.on(fresh, "ACL", "WHOAMI");
      const named = await s.connect("named");
      await s.on(named, "AUTH", "default", password);
      await s.on(named, "PING");
      await s.admin("CONFIG", "SET", "requirepass", "");
      await s.admin("ACL", "GETUSER", "default");
      await s.admin("ACL", "LIST");
      const open = await s.connect("open");
      await s.on(open, "PING");
    } finally {
      await s.adminClient.call("CONFIG", "SET", "requirepass", "");
    }
  });
  expect(lines).toContain(
    line("admin", "ACL GETUSER default", [
      "flags",
      ["on"],
      "passwords",
      [sha256(password)],
      "commands",
      "+@all",
      "keys",
      "~*",
      "channels",
      "&*",
      "selectors",
      [],
    ]),
  );
});

describe("Redis 7's selectors, read and write key permissions and first-argument rules", () => {
  /** Applies each step's rules to `user` in turn, asking GETUSER (and ACL LIST with `list`) after each. */
  async function setEach(s: Scene, user: string, steps: readonly string[][], list = false): Promise<void> {
    for (const rules of steps) {
      await s.admin("ACL", "SETUSER", user, ...rules);
      await s.admin("ACL", "GETUSER", user);
      if (list) await s.admin("ACL", "LIST");
    }
  }

  test("selectors: (…) rules, one split over several arguments, clearselectors, and their errors, as GETUSER and LIST show them", async () => {
    await sameOnBoth(async (s) => {
      const steps = [
        ["(+get ~k*)"],
        ["(+set", "~s*", "&c*)"],
        ["( +get  ~x )"],
        ["()"],
        ["(&news* %R~r* +@read -keys)"],
        ["clearselectors"],
        ["(+get", "(+set", "~t*)"],
        // An unclosed selector, rules a selector cannot hold, and a bad rule inside one.
        ["(+get", "~k*"],
        ["("],
        [")"],
        ["(on)"],
        ["(>pw)"],
        ["(reset)"],
        ["(clearselectors)"],
        ["(allkeys ~x)"],
        ["(+nosuch)"],
        ["(~a", "b)", "+nosuch"],
        ['("~a b")'],
        ["(~'x')"],
        ["~k*", "+get", "(~s* +set)", "reset"],
      ];
      await setEach(s, "selector-user", steps, true);
    });
  });

  test("key permissions: %R~ and %W~ and %RW~, patterns merged, and their errors", async () => {
    await sameOnBoth(async (s) => {
      const steps = [
        ["%R~a"],
        ["%W~a"],
        ["%W~b", "%R~c"],
        ["%RW~d", "%rw~e", "%WR~f"],
        ["resetkeys", "%R~*", "~x"],
        ["%R", "%W"],
        ["%RR~g"],
        ["%~h"],
        ["%"],
        ["%X~i"],
        ["%R~a b"],
        ["allkeys", "%R~j"],
      ];
      await setEach(s, "keyperm-user", steps);
      await s.admin("ACL", "LIST");
    });
  });

  test("first-argument rules: +select|0 allows SELECT 0 only, until a rule about SELECT itself; their errors", async () => {
    await sameOnBoth(async (s) => {
      const steps = [
        ["on", ">pw", "-@all", "+select|0", "+acl|whoami"],
        ["+select|1", "+SELECT|0"],
        ["+select|0", "+@keyspace"],
        ["+select"],
        ["-select"],
        ["+select|0", "-@connection"],
        ["+select|0", "+@all", "-select"],
        ["+select|"],
        ["+config|get|x"],
        ["+client|id|x"],
        ["-select|0"],
        ["+nosuch|x"],
        ["+get|x|y"],
        ["-@all", "+acl|whoami", "+select|0", "+select|2"],
      ];
      await setEach(s, "firstarg-user", steps);
      const u = await s.login("firstarg-user", "pw");
      for (const argv of [["SELECT", "0"], ["select", "2"], ["SELECT", "1"], ["SELECT"], ["ACL", "WHOAMI"]]) await s.on(u, ...argv);
      for (const argv of [
        ["SELECT", "2"],
        ["SELECT", "3"],
        ["SELECT", "0", "x"],
      ])
        await s.admin("ACL", "DRYRUN", "firstarg-user", ...argv);
    });
  });

  test("a command runs when one selector allows all of it; refused, NOPERM, DRYRUN and the log name the worst any selector found", async () => {
    const lines = await sameOnBoth(async (s) => {
      await s.admin(
        "ACL",
        "SETUSER",
        "perm-user",
        "on",
        ">pw",
        "+@all",
        "-keys",
        "%R~read*",
        "%W~write*",
        "~rw*",
        "&root*",
        "(+get +set +publish ~sel* &sel*)",
      );
      const u = await s.login("perm-user", "pw");
      const runs = [
        ["GET", "read1"],
        ["SET", "read1", "x"],
        ["SET", "write1", "x"],
        ["GET", "write1"],
        ["COPY", "read1", "write2"],
        ["COPY", "write1", "read2"],
        ["LPUSH", "rw1", "x"],
        ["LRANGE", "rw1", "0", "-1"],
        ["SET", "sel1", "x"],
        ["GET", "sel1"],
        ["DEL", "sel1"],
        ["MGET", "read1", "rw1", "sel1"],
        ["KEYS", "*"],
        // A read and a write key each: GETDEL needs both on one key.
        ["GETDEL", "read1"],
        ["GETDEL", "rw1"],
        // EVAL's keys carry no flags: any pattern that matches lets them through.
        ["EVAL", "return 1", "1", "write1"],
        ["EVAL", "return 1", "1", "other"],
        ["PUBLISH", "root1", "m"],
        ["PUBLISH", "sel1", "m"],
        ["PUBLISH", "other", "m"],
        // Shard channels are channels, not keys.
        ["SPUBLISH", "root1", "m"],
        ["SPUBLISH", "other", "m"],
        ["SORT", "rw1", "BY", "nosort"],
        ["SORT", "rw1", "BY", "w_*"],
      ];
      for (const argv of runs) await s.on(u, ...argv);
      for (const argv of runs) await s.admin("ACL", "DRYRUN", "perm-user", ...argv);
      await s.admin("ACL", "DRYRUN", "perm-user", "PUBLISH", "sel1", "m");
      await s.admin("ACL", "DRYRUN", "perm-user", "SSUBSCRIBE", "root1", "other");
      await s.admin("ACL", "LOG");
      // Every key readable (%R~*): SORT's BY and GET are allowed.
      await s.admin("ACL", "SETUSER", "perm-user", "%R~*");
      await s.on(u, "SORT", "rw1", "BY", "w_*", "GET", "#");
      await s.admin("DEL", "read1", "write1", "write2", "rw1", "sel1");
    });
    expect(lines).toContain(line("perm-user", "SET read1 x", { e: "NOPERM this user has no permissions to access one of the keys used as arguments" }));
    expect(lines).toContain(line("perm-user", "GET sel1", "x"));
    expect(lines).toContain(
      line("perm-user", "SPUBLISH other m", { e: "NOPERM this user has no permissions to access one of the channels used as arguments" }),
    );
  });

  test("acl-pubsub-default allchannels: new users and selectors, and reset, start with every channel", async () => {
    await sameOnBoth(async (s) => {
      try {
        await s.admin("CONFIG", "SET", "acl-pubsub-default", "ALLCHANNELS");
        await s.admin("CONFIG", "GET", "acl-pubsub-default");
        await s.admin("ACL", "SETUSER", "pubsub-user", "on", "(+get)");
        await s.admin("ACL", "GETUSER", "pubsub-user");
        await s.admin("ACL", "SETUSER", "pubsub-user", "resetchannels", "&a", "reset");
        await s.admin("ACL", "GETUSER", "pubsub-user");
        await s.admin("CONFIG", "SET", "acl-pubsub-default", "resetchannels");
        await s.admin("ACL", "SETUSER", "pubsub-user", "reset", "(+set)");
        await s.admin("ACL", "GETUSER", "pubsub-user");
        await s.admin("CONFIG", "SET", "acl-pubsub-default", "nochannels");
      } finally {
        await s.admin("CONFIG", "SET", "acl-pubsub-default", "resetchannels");
      }
    });
  });
});
