/**
 * Generated multi-client command sequences played on redis-server and on `svc kv` from the same
 * fresh state, written down as transcripts and compared line by line, then the servers' state
 * after the sequence read back and compared too.
 *
 *   A> SUBSCRIBE c     a command client A sent
 *   A< [...]           a reply (or a push) A received before its next sync point
 *   B! [...]           what B received meanwhile, having sent nothing (messages, invalidations)
 *   A blocked          A's command blocked (the server's blocked_clients grew)
 *   A closed           the server closed A's connection
 *
 * Nothing waits on a clock. After a command, the client sends `PING <marker>` in the same write
 * and everything it receives up to the marker's echo belongs to the command; every other client
 * is then pinged the same way, so what a command caused elsewhere is written down before the
 * next command runs. A client in MULTI would queue the PING, so there exactly one reply is read.
 * A command that blocks is recognised by INFO's blocked_clients, and a blocked client's replies
 * are written down when that count says it was released.
 */
import { expect } from "bun:test";
import fc from "fast-check";
import { encodeCommand, RespClient, type RespValue, show } from "./resp-client.ts";
import type { RedisAndKv } from "./side-by-side.ts";
import { waitUntil } from "./wire.ts";

/** A step of a sequence: client `client` sends `argv` (`<id:B>` and `<addr:B>` stand for B's). */
export interface Step {
  client: string;
  argv: string[];
}

/** A step: `client` sends `argv`. */
export const step = (client: string, ...argv: string[]): Step => ({ client, argv });

export interface DuetOptions {
  /** Named connections, opened in order before the steps; RESP3 ones send HELLO 3 first. */
  clients: { name: string; protocol: 2 | 3 }[];
  /** Commands the control connection runs before the clients connect (after FLUSHALL). */
  reset?: string[][];
  /** Whether a command may block (only then is blocked_clients asked after it). */
  mayBlock?: (argv: string[]) => boolean;
  /**
   * What of a reply is compared; `names` turns a client id or address into its name. Only what
   * legitimately differs between the servers may be changed here, and each caller says why.
   */
  normalise?: (argv: string[], reply: RespValue, names: Names) => RespValue;
  /**
   * A reply to keep for later steps, whose argument `<saved>` then stands for it (FUNCTION DUMP's
   * payload for FUNCTION RESTORE): the text to keep, or undefined to keep what was kept.
   */
  save?: (argv: string[], reply: RespValue) => string | undefined;
  /**
   * What a client received between two sync points, as a whole, for what Redis sends in an order
   * it does not define (UNSUBSCRIBE from every channel, messages for several patterns): `argv` is
   * the command it sent, or null for what it received while another client's command ran.
   */
  normaliseGroup?: (argv: string[] | null, values: RespValue[]) => RespValue[];
  /** Lines describing the state after the steps, read by a fresh connection. */
  snapshot?: (control: RespClient, names: Names) => Promise<string[]>;
}

/**
 * `values` with each run of consecutive values that `inRun` picks sorted by their text: for a
 * normaliseGroup whose messages come, a run at a time, in an order Redis does not define.
 */
export function sortedRuns(values: readonly RespValue[], inRun: (v: RespValue) => boolean): RespValue[] {
  const out = [...values];
  for (let i = 0; i < out.length; i++) {
    if (!inRun(out[i]!)) continue;
    let j = i;
    while (j < out.length && inRun(out[j]!)) j++;
    out.splice(i, j - i, ...out.slice(i, j).sort((a, b) => show(a).localeCompare(show(b))));
    i = j;
  }
  return out;
}

/** Client ids and addresses of one server's named connections. */
export interface Names {
  /** "<id:A>" for A's id, else the number as it was. */
  id(id: bigint | string): string;
  /** A text with every known id= / addr= value replaced by the connection's name. */
  text(text: string): string;
}

/** The argument PING echoes to mark the end of what a command caused. */
const marker = "\u0001duet-sync";
/** A RESP3 push's payload, or null. */
const pushOf = (v: RespValue): RespValue[] | null => (v !== null && typeof v === "object" && !Array.isArray(v) && "push" in v ? v.push : null);
const isMarker = (v: RespValue): boolean => v === marker || (Array.isArray(v) && v[0] === "pong" && v[1] === marker);

/** A bulk or verbatim string's text (RESP3 answers CLIENT INFO and INFO verbatim, "txt:" first). */
export const textOf = (v: RespValue): string => (typeof v === "string" ? v : v !== null && typeof v === "object" && "v" in v ? v.v.slice(4) : "");

/** A connection whose every received value is queued as it arrives, so no read is ever lost. */
class Queued {
  private readonly values: RespValue[] = [];
  private wake: (() => void) | null = null;
  closed = false;
  /** Whether the transcript says so yet. */
  closeNoted = false;
  inMulti = false;
  /** The commands queued since MULTI (answered QUEUED), whose replies EXEC gives. */
  queued: string[][] = [];
  blocked = false;

  constructor(
    readonly client: RespClient,
    readonly id: bigint,
    readonly addr: string,
    readonly laddr: string,
  ) {
    void this.pump();
    client.closed.then(() => {
      this.closed = true;
      this.wake?.();
    });
  }

  private async pump(): Promise<void> {
    for (;;) {
      const v = await this.client.read();
      this.values.push(v);
      this.wake?.();
    }
  }

  /** The next value, or undefined once the connection is closed and nothing is left. */
  async next(): Promise<RespValue | undefined> {
    for (;;) {
      if (this.values.length > 0) return this.values.shift();
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  /** Whether the marker (or the close) has arrived. */
  get synced(): boolean {
    return this.closed || this.values.some(isMarker);
  }
}

class Player {
  readonly lines: string[] = [];
  private readonly conns = new Map<string, Queued>();
  private control!: RespClient;
  /** What options.save kept last. */
  private saved = "";

  constructor(
    private readonly port: number,
    private readonly options: DuetOptions,
  ) {}

  readonly names: Names = {
    id: (id) => {
      for (const [name, c] of this.conns) if (String(c.id) === String(id)) return `<id:${name}>`;
      return String(id);
    },
    text: (text) => {
      let out = text;
      for (const [name, c] of this.conns) {
        out = out
          .replace(new RegExp(`\\bid=${c.id}\\b`, "g"), `id=<${name}>`)
          .replaceAll(`addr=${c.addr} `, `addr=<${name}> `)
          .replaceAll(`laddr=${c.laddr} `, "laddr=<server> ");
      }
      return out;
    },
  };

  async open(): Promise<void> {
    const control = await RespClient.connect(this.port);
    for (const argv of [["FLUSHALL"], ["SCRIPT", "FLUSH"], ["FUNCTION", "FLUSH"], ...(this.options.reset ?? [])]) await control.call(...argv);
    // The last sequence's connections must be gone (their subscriptions, tracking, blocking).
    await waitUntil(async () => (/^connected_clients:1\r?$/m.test((await control.call("INFO", "clients")) as string) ? true : undefined), "an idle server");
    this.control = control;
    for (const { name, protocol } of this.options.clients) {
      const client = await RespClient.connect(this.port);
      if (protocol === 3) await client.call("HELLO", "3");
      const id = (await client.call("CLIENT", "ID")) as bigint;
      const info = textOf(await client.call("CLIENT", "INFO"));
      const field = (f: string) => new RegExp(`\\b${f}=(\\S+)`).exec(info)![1]!;
      this.conns.set(name, new Queued(client, id, field("addr"), field("laddr")));
    }
  }

  private argument(arg: string): string {
    if (arg === "<saved>") return this.saved;
    return arg.replace(/^<(id|addr):(\w+)>$/, (whole, kind: string, name: string) => {
      const c = this.conns.get(name);
      if (c === undefined) return whole;
      return kind === "id" ? String(c.id) : c.addr;
    });
  }

  private show(argv: string[], v: RespValue): string {
    this.saved = this.options.save?.(argv, v) ?? this.saved;
    return show(this.options.normalise?.(argv, v, this.names) ?? v);
  }

  async step({ client, argv }: Step): Promise<void> {
    const c = this.conns.get(client)!;
    this.lines.push(`${client}> ${argv.join(" ")}`);
    if (c.closed || c.closeNoted) {
      // What it received before the close first, as a drain would have written it.
      if (!c.closeNoted) await this.readToMarker(client, c, "!", argv);
      this.lines.push(`${client} not sent`);
      return;
    }
    if (c.blocked) {
      // Its reply would wait behind the block: the step is left out, on both servers alike.
      this.lines.push(`${client} still blocked: not sent`);
      return;
    }
    const sent = argv.map((a) => this.argument(a));
    const word = argv[0]!.toUpperCase();
    const blockedBefore = this.options.mayBlock?.(argv) ? await this.blockedClients() : 0;
    if (c.inMulti || word === "MULTI") {
      // A PING would be queued: the reply is the first value that is not a push.
      c.client.writeRaw(encodeCommand(sent));
      // Pushes before the reply (the messages EXEC's PUBLISH sent the client itself) are written
      // down as a group, as those before a marker are (normaliseGroup).
      const pushes: RespValue[] = [];
      for (;;) {
        const v = await c.next();
        if (v === undefined) {
          c.closeNoted = true;
          this.lines.push(`${client} closed`);
          return;
        }
        if (pushOf(v) !== null) {
          pushes.push(v);
          continue;
        }
        for (const push of this.options.normaliseGroup?.(argv, pushes) ?? pushes) this.lines.push(`${client}< ${this.show(argv, push)}`);
        // EXEC's replies are each normalised as their own command's would be.
        const shown =
          word === "EXEC" && Array.isArray(v) && v.length === c.queued.length
            ? show(v.map((item, i) => this.options.normalise?.(c.queued[i]!, item, this.names) ?? item))
            : this.show(argv, v);
        this.lines.push(`${client}< ${shown}`);
        const status = v !== null && typeof v === "object" && "s" in v ? v.s : null;
        if (word === "MULTI" && status === "OK") c.inMulti = true;
        if (c.inMulti && status === "QUEUED") c.queued.push(argv);
        if (word === "EXEC" || word === "DISCARD" || word === "RESET") {
          c.inMulti = false;
          c.queued = [];
        }
        break;
      }
    } else {
      c.client.writeRaw(Buffer.concat([encodeCommand(sent), encodeCommand(["PING", marker])]));
      if (this.options.mayBlock?.(argv)) {
        // Either the marker comes back, or the server counts one more blocked client.
        const blocked = await waitUntil(
          async () => (c.synced ? false : (await this.blockedClients()) > blockedBefore ? true : undefined),
          "a reply or a blocked client",
        );
        if (blocked) {
          c.blocked = true;
          this.lines.push(`${client} blocked`);
        }
      }
      if (!c.blocked) await this.readToMarker(client, c, "<", argv);
    }
    await this.released();
    for (const [name, other] of this.conns) {
      if (name === client || other.closeNoted || other.inMulti || other.blocked) continue;
      // A connection the server closed gives what it had received, then its close, whether or not
      // the socket has told us yet (the PING then goes nowhere).
      other.client.writeRaw(encodeCommand(["PING", marker]));
      await this.readToMarker(name, other, "!", argv);
    }
  }

  /** Writes down what `c` received up to its marker (or its close). */
  private async readToMarker(name: string, c: Queued, mark: "<" | "!", argv: string[]): Promise<void> {
    const values: RespValue[] = [];
    let closed = false;
    for (;;) {
      const v = await c.next();
      if (v === undefined) closed = true;
      if (v === undefined || isMarker(v)) break;
      values.push(v);
    }
    const group = this.options.normaliseGroup?.(mark === "<" ? argv : null, values) ?? values;
    for (const v of group) this.lines.push(`${name}${mark} ${this.show(argv, v)}`);
    if (closed && !c.closeNoted) {
      c.closeNoted = true;
      this.lines.push(`${name} closed`);
    }
  }

  private async blockedClients(): Promise<number> {
    const text = (await this.control.call("INFO", "clients")) as string;
    return Number(/^blocked_clients:(\d+)/m.exec(text)![1]);
  }

  /** Writes down, in name order, the replies of clients the last step released from blocking. */
  private async released(): Promise<void> {
    const blocked = [...this.conns].filter(([, c]) => c.blocked);
    if (blocked.length === 0) return;
    const stillBlocked = await this.blockedClients();
    const freed = blocked.length - stillBlocked;
    if (freed <= 0) return;
    await waitUntil(() => (blocked.filter(([, c]) => c.synced).length >= freed ? true : undefined), `${freed} released clients' replies`);
    for (const [name, c] of blocked) {
      if (!c.synced) continue;
      c.blocked = false;
      await this.readToMarker(name, c, "<", [name]);
    }
  }

  /** Reads the state (the named connections still open, so that their subscriptions count), then closes them. */
  async finish(): Promise<void> {
    try {
      if (this.options.snapshot !== undefined) {
        const fresh = await RespClient.connect(this.port);
        try {
          this.lines.push("-- state --", ...(await this.options.snapshot(fresh, this.names)));
        } finally {
          fresh.close();
        }
      }
    } finally {
      for (const c of this.conns.values()) c.client.close();
      this.control.close();
    }
  }
}

/** Plays `steps` on the server at `port` from a fresh state; returns the transcript. */
export async function play(port: number, steps: Step[], options: DuetOptions): Promise<string[]> {
  const player = new Player(port, options);
  await player.open();
  try {
    for (const step of steps) await player.step(step);
  } finally {
    await player.finish();
  }
  return player.lines;
}

/** Plays `steps` on redis-server, then on svc kv; throws, showing both, where they part. */
export async function expectSameDuet(servers: RedisAndKv, steps: Step[], options: DuetOptions): Promise<string[]> {
  const redis = await play(servers.redis.port, steps, options);
  const kv = await play(servers.kv.port, steps, options);
  const at = redis.findIndex((line, i) => line !== kv[i]);
  if (at >= 0 || redis.length !== kv.length) {
    const from = at < 0 ? Math.min(redis.length, kv.length) : at;
    const context = (lines: string[]) =>
      lines
        .slice(Math.max(0, from - 12), from + 4)
        .map((l, i) => `${i + Math.max(0, from - 12) === from ? ">>" : "  "} ${l}`)
        .join("\n");
    throw new Error(`transcripts part at line ${from}\n-- redis-server --\n${context(redis)}\n-- svc kv --\n${context(kv)}`);
  }
  expect(kv).toEqual(redis);
  return kv;
}

/** A property's test timeout: a minute in CI, an hour for a local hunt with SVC_DUET_RUNS. */
export const propertyTimeoutMs = process.env.SVC_DUET_RUNS === undefined ? 60_000 : 3_600_000;

/**
 * Runs a fast-check property of step sequences (fast-check prints the seed and path of a failure;
 * SVC_DUET_SEED replays a seed, SVC_DUET_RUNS raises the count for a longer local hunt).
 */
export async function duetProperty(servers: RedisAndKv, steps: fc.Arbitrary<Step[]>, options: DuetOptions, numRuns: number): Promise<void> {
  const seed = process.env.SVC_DUET_SEED === undefined ? undefined : Number(process.env.SVC_DUET_SEED);
  const runs = process.env.SVC_DUET_RUNS === undefined ? numRuns : Number(process.env.SVC_DUET_RUNS);
  await fc.assert(
    fc.asyncProperty(steps, async (s) => void (await expectSameDuet(servers, s, options))),
    { numRuns: runs, seed, endOnFailure: true },
  );
}

/** Every key of database 0 and 1 with its type, value (sets and hashes sorted) and whether it has a time to live. */
export async function keyspaceLines(c: RespClient): Promise<string[]> {
  const out: string[] = [];
  for (const db of ["0", "1"]) {
    await c.call("SELECT", db);
    const keys = ((await c.call("KEYS", "*")) as string[]).sort();
    for (const key of keys) {
      const type = ((await c.call("TYPE", key)) as { s: string }).s;
      const read: Record<string, string[]> = {
        string: ["GET", key],
        list: ["LRANGE", key, "0", "-1"],
        hash: ["HGETALL", key],
        set: ["SMEMBERS", key],
        zset: ["ZRANGE", key, "0", "-1", "WITHSCORES"],
        stream: ["XRANGE", key, "-", "+"],
      };
      let value = read[type] === undefined ? null : await c.call(...read[type]!);
      if (type === "set" && Array.isArray(value)) value = [...value].sort();
      if (type === "hash" && Array.isArray(value)) {
        const pairs: string[] = [];
        for (let i = 0; i < value.length; i += 2) pairs.push(`${value[i]}=${value[i + 1]}`);
        value = pairs.sort();
      }
      const pttl = (await c.call("PTTL", key)) as bigint;
      out.push(`db${db} ${key} ${type} ${show(value)}${pttl >= 0n ? " (expires)" : ""}`);
    }
  }
  await c.call("SELECT", "0");
  return out;
}

/** A sequence generator's helpers. */
export const lit = (s: string) => fc.constant(s);
export const cmd = (...parts: fc.Arbitrary<string | string[]>[]) => fc.tuple(...parts).map((p) => p.flat());
export const maybe = (...parts: fc.Arbitrary<string | string[]>[]) => fc.option(cmd(...parts), { nil: [] as string[] });
/** Steps of `client` running the commands `argv` draws. */
export const by = (clients: fc.Arbitrary<string>, argv: fc.Arbitrary<string[]>) => fc.tuple(clients, argv).map(([client, a]): Step => ({ client, argv: a }));
