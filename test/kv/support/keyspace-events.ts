/**
 * Keyspace notifications as a transcript, for comparing svc kv with redis-server: commands run on
 * named connections, and a subscriber on its own connection, pattern-subscribed to every channel,
 * writes down each notification it receives. After each command a PUBLISH on a marker channel
 * follows it; the server delivers messages in the order it publishes them, so the events read
 * before the marker are exactly the ones the command (and nothing after it) published.
 *
 * Transcript lines: `A> SET k v` a command, `A< "OK"` its reply, `! __keyspace@0__:k set` an event.
 */
import { expect } from "bun:test";
import type { RedisAndKv } from "./side-by-side.ts";
import { RespClient, type RespValue, show } from "./resp-client.ts";

/** The marker channel; a key or event is never named this. */
const syncChannel = "events-test-sync";

export class EventTranscript {
  readonly lines: string[] = [];
  private readonly clients = new Map<string, RespClient>();
  private readonly inFlight = new Map<string, Promise<RespValue>>();
  private marks = 0;
  /** Connections between MULTI and EXEC: a marker there would be queued, not published. */
  private readonly inMulti = new Set<string>();

  private constructor(
    private readonly port: number,
    private readonly subscriber: RespClient,
  ) {}

  /**
   * Connects to `port`, empties every database, turns on the event classes `classes` (CONFIG
   * notify-keyspace-events) and starts listening.
   */
  static async open(port: number, classes: string): Promise<EventTranscript> {
    const subscriber = await RespClient.connect(port);
    const transcript = new EventTranscript(port, subscriber);
    const a = await transcript.client("A");
    await a.call("FLUSHALL");
    await a.call("CONFIG", "SET", "notify-keyspace-events", classes);
    await subscriber.call("PSUBSCRIBE", "*");
    return transcript;
  }

  private async client(name: string): Promise<RespClient> {
    let client = this.clients.get(name);
    if (client === undefined) {
      client = await RespClient.connect(this.port);
      this.clients.set(name, client);
    }
    return client;
  }

  /** Runs a command on connection `name` (default A), writes down its reply, then its events. */
  async call(argv: readonly string[], name = "A"): Promise<RespValue> {
    const client = await this.client(name);
    this.lines.push(`${name}> ${argv.join(" ")}`);
    const reply = await client.call(...argv);
    this.lines.push(`${name}< ${show(reply)}`);
    const command = argv[0]!.toUpperCase();
    if (command === "MULTI") this.inMulti.add(name);
    else if (command === "EXEC" || command === "DISCARD") this.inMulti.delete(name);
    if (!this.inMulti.has(name)) await this.sync(client);
    return reply;
  }

  /** Sends a command that blocks (BLPOP …) on `name` without waiting for its reply; see `settle`. */
  async send(argv: readonly string[], name: string): Promise<void> {
    const client = await this.client(name);
    this.lines.push(`${name}> ${argv.join(" ")}`);
    this.inFlight.set(name, client.call(...argv));
    // A blocked connection cannot carry the marker: a round trip on another one gives the server
    // time to read the command before the transcript goes on.
    await (await this.client("sync")).call("PING");
  }

  /** Waits for the reply of the command `send` left in flight on `name`, and writes it down. */
  async settle(name: string): Promise<void> {
    const reply = await this.inFlight.get(name)!;
    this.inFlight.delete(name);
    this.lines.push(`${name}< ${show(reply)}`);
    await this.sync(await this.client("sync"));
  }

  /** Writes down the events published so far, up to a marker published on `client`. */
  private async sync(client: RespClient): Promise<void> {
    const mark = String(++this.marks);
    await client.call("PUBLISH", syncChannel, mark);
    for (;;) {
      const message = (await this.subscriber.read()) as RespValue[];
      const [, , channel, text] = message as string[];
      if (channel === syncChannel && text === mark) return;
      this.lines.push(`! ${channel} ${text}`);
    }
  }

  /** The events written down so far (the `!` lines, without the `! `). */
  get events(): string[] {
    return this.lines.filter((l) => l.startsWith("! ")).map((l) => l.slice(2));
  }

  async close(): Promise<void> {
    const a = this.clients.get("A");
    if (a !== undefined) await a.call("CONFIG", "SET", "notify-keyspace-events", "");
    for (const client of this.clients.values()) client.close();
    this.subscriber.close();
  }
}

/**
 * Plays `body` on redis-server, then on svc kv, each with the event classes `classes` on; the
 * transcripts must be identical. Returns svc's.
 */
export async function expectSameEvents(servers: RedisAndKv, classes: string, body: (t: EventTranscript) => Promise<void>): Promise<string[]> {
  const transcripts: string[][] = [];
  for (const server of [servers.redis, servers.kv]) {
    const t = await EventTranscript.open(server.port, classes);
    try {
      await body(t);
    } finally {
      await t.close();
    }
    transcripts.push(t.lines);
  }
  expect(transcripts[1]!.join("\n")).toBe(transcripts[0]!.join("\n"));
  return transcripts[1]!;
}

/** Runs each command in turn on connection A (a script of `expectSameEvents`). */
export const runAll = (commands: readonly (readonly string[])[]) => async (t: EventTranscript) => {
  for (const argv of commands) await t.call(argv);
};
