/**
 * Multi-client scenarios played against a real server and written down as a transcript, so the
 * same scenario on redis-server and on `svc kv` can be compared line by line:
 *
 *   A> BLPOP q 0        a command client A sent
 *   B< ["q","a"]        the next reply client B received
 *   A closed            the server closed A's connection
 *
 * Waiting points (until n clients are blocked, until A's connection is closed) are taken from
 * the server's own INFO, never from sleeps, so the transcript does not depend on timing.
 */
import { expect } from "bun:test";
import { encodeCommand, RespClient, type RespValue, show } from "./resp-client.ts";
import type { RedisAndKv } from "./side-by-side.ts";
import { waitUntil } from "./wire.ts";

/** How long a reply that the scenario expects may take before it is written down as missing. */
const replyWaitMs = 3000;

export class Scenario {
  readonly transcript: string[] = [];
  private readonly clients = new Map<string, { client: RespClient; id: bigint }>();
  private control!: RespClient;

  private constructor(private readonly port: number) {}

  /** Runs `body` on a fresh database of the server at `port`; returns the transcript. */
  static async run(port: number, body: (s: Scenario) => Promise<void>): Promise<string[]> {
    const s = new Scenario(port);
    s.control = await RespClient.connect(port);
    await s.control.call("FLUSHALL");
    try {
      await body(s);
    } finally {
      for (const { client } of s.clients.values()) client.close();
      // The next scenario must not see these clients' subscriptions or blocking.
      await waitUntil(async () => ((await s.info("connected_clients")) === 1 ? true : undefined), "the scenario's clients to be gone").catch(() => undefined);
      s.control.close();
    }
    return s.transcript;
  }

  private get(name: string): { client: RespClient; id: bigint } {
    const entry = this.clients.get(name);
    if (entry === undefined) throw new Error(`no client ${name}: open it with s.open("${name}")`);
    return entry;
  }

  /** Opens named connections (their CLIENT IDs are kept for kill(), not written down). */
  async open(...names: string[]): Promise<void> {
    for (const name of names) {
      const client = await RespClient.connect(this.port);
      const id = (await client.call("CLIENT", "ID")) as bigint;
      this.clients.set(name, { client, id });
    }
  }

  /** Writes down a line of the scenario's own (a value it computed). */
  note(line: string): void {
    this.transcript.push(line);
  }

  /**
   * An argument that stands for a client's id ("<id:A>" is A's CLIENT ID): the transcript keeps
   * the placeholder, as ids differ between servers.
   */
  idOf(name: string): string {
    this.get(name);
    return `<id:${name}>`;
  }

  private encode(argv: readonly string[]): Buffer {
    return encodeCommand(argv.map((a) => a.replace(/^<id:(\w+)>$/, (_, n: string) => String(this.get(n).id))));
  }

  /** Sends a command without waiting for its reply (a blocking command). */
  send(name: string, ...argv: string[]): void {
    this.transcript.push(`${name}> ${argv.join(" ")}`);
    this.get(name).client.writeRaw(this.encode(argv));
  }

  /** Sends several commands in one write. */
  pipeline(name: string, ...argvs: string[][]): void {
    this.transcript.push(`${name}> ${argvs.map((a) => a.join(" ")).join(" | ")}`);
    this.get(name).client.writeRaw(Buffer.concat(argvs.map((a) => this.encode(a))));
  }

  /** Waits for the client's next reply and writes it down; returns it. */
  async read(name: string): Promise<RespValue | undefined> {
    const { client } = this.get(name);
    const reply = await Promise.race([client.read(), client.closed.then(() => undefined), Bun.sleep(replyWaitMs).then(() => undefined)]);
    this.transcript.push(reply === undefined ? `${name}< (no reply${client.isClosed ? ", closed" : ""})` : `${name}< ${show(reply)}`);
    return reply;
  }

  /** Sends a command and writes down its reply. */
  async call(name: string, ...argv: string[]): Promise<RespValue | undefined> {
    this.send(name, ...argv);
    return this.read(name);
  }

  /** Like call(), for commands that answer once per argument (SUBSCRIBE, UNSUBSCRIBE, ...). */
  async callMany(name: string, replies: number, ...argv: string[]): Promise<(RespValue | undefined)[]> {
    this.send(name, ...argv);
    const out = [];
    for (let i = 0; i < replies; i++) out.push(await this.read(name));
    return out;
  }

  /**
   * Reads `count` replies and writes them down as one line made by `describe` — for replies whose
   * order Redis leaves undefined (UNSUBSCRIBE from every channel walks a hash table).
   */
  async readMany(name: string, count: number, describe: (replies: RespValue[]) => string): Promise<void> {
    const { client } = this.get(name);
    const replies: RespValue[] = [];
    for (let i = 0; i < count; i++) {
      const reply = await Promise.race([client.read(), Bun.sleep(replyWaitMs).then(() => undefined)]);
      if (reply === undefined) break;
      replies.push(reply);
    }
    this.transcript.push(`${name}< ${describe(replies)}${replies.length < count ? ` (only ${replies.length} of ${count} replies)` : ""}`);
  }

  /** Sends a command whose reply differs between servers by design (HELLO's id): not written down. */
  async quietly(name: string, ...argv: string[]): Promise<RespValue> {
    return this.get(name).client.call(...argv);
  }

  /** Replies a client has received but not read yet, written down (a closed client's last words). */
  unread(name: string): void {
    const { client } = this.get(name);
    const replies: string[] = [];
    for (let r = client.tryRead(); r !== undefined; r = client.tryRead()) replies.push(show(r));
    this.transcript.push(`${name} unread: [${replies.join(", ")}]`);
  }

  /** A server-side number from INFO clients (connected_clients, blocked_clients, ...). */
  async info(field: string): Promise<number> {
    const text = (await this.control.call("INFO", "clients")) as string;
    const m = new RegExp(`^${field}:(\\d+)`, "m").exec(text);
    if (m === null) throw new Error(`INFO clients has no ${field}:\n${text}`);
    return Number(m[1]);
  }

  /** Waits until exactly `n` clients are blocked on the server. */
  async blocked(n: number): Promise<void> {
    await waitUntil(async () => ((await this.info("blocked_clients")) === n ? true : undefined), `${n} blocked clients`);
    this.transcript.push(`(${n} blocked)`);
  }

  /** CLIENT KILL ID <name's id>, sent by the control connection; the reply is written down. */
  async kill(name: string): Promise<void> {
    const reply = await this.control.call("CLIENT", "KILL", "ID", String(this.get(name).id));
    this.transcript.push(`kill ${name}: ${show(reply)}`);
  }

  /** Closes the client's connection from our side and waits until the server has let it go. */
  async disconnect(name: string): Promise<void> {
    const before = await this.info("connected_clients");
    this.get(name).client.close();
    await waitUntil(async () => ((await this.info("connected_clients")) < before ? true : undefined), `the server to drop ${name}`);
    this.transcript.push(`${name} disconnected`);
  }

  /** Waits until the server has closed the client's connection, and writes that down. */
  async closed(name: string): Promise<void> {
    const { client } = this.get(name);
    const closed = await Promise.race([client.closed.then(() => true), Bun.sleep(replyWaitMs).then(() => false)]);
    this.transcript.push(`${name} ${closed ? "closed" : "still open"}`);
  }

  /** Runs a command on the control connection (not part of the scenario's clients) and writes it down. */
  async ctl(...argv: string[]): Promise<RespValue> {
    const reply = await this.control.call(...argv);
    this.transcript.push(`ctl> ${argv.join(" ")}`, `ctl< ${show(reply)}`);
    return reply;
  }
}

/**
 * Plays the scenario on redis-server, then on svc kv, and expects identical transcripts; returns
 * redis-server's, for a test to check a line of it.
 */
export async function expectSameTranscripts(servers: RedisAndKv, body: (s: Scenario) => Promise<void>): Promise<string[]> {
  const expected = await Scenario.run(servers.redis.port, body);
  const actual = await Scenario.run(servers.kv.port, body);
  expect(actual).toEqual(expected);
  return expected;
}
