/**
 * Client-side caching as a transcript, for comparing svc kv with redis-server: named connections
 * (RESP3, or RESP2) run commands, and every message the server pushes to any of them is written
 * down where it arrives. After each command every connection is sent a PING and read up to its
 * answer, so the invalidations a command caused are written down before the next command runs.
 *
 * Lines: `A> GET k` a command, `A< "v"` its reply, `A! ["invalidate",["k"]]` a message. Client
 * IDs differ between servers: a REDIRECT argument and the IDs in CLIENT GETREDIR, TRACKINGINFO and
 * `tracking-redir-broken` are written as the connection's name (`#B`).
 */
import { expect } from "bun:test";
import { waitUntil } from "../../support/wait.ts";
import { encodeCommand, RespClient, type RespValue, show } from "./resp-client.ts";
import type { RedisAndKv } from "./side-by-side.ts";

interface Connection {
  client: RespClient;
  protocol: 2 | 3;
  id: string;
}

export class TrackingTranscript {
  readonly lines: string[] = [];
  private readonly connections = new Map<string, Connection>();
  /** Every connection's ID, closed ones too (a broken redirect still names its target). */
  private readonly ids = new Map<string, string>();
  /** Connections between MULTI and EXEC: a PING there would be queued, not answered. */
  private readonly inMulti = new Set<string>();
  /** Connections whose blocked command has not been answered yet (block, receive). */
  private readonly waiting = new Set<string>();

  private constructor(private readonly port: number) {}

  static async open(port: number): Promise<TrackingTranscript> {
    const t = new TrackingTranscript(port);
    await withFresh(port, (c) => c.call("FLUSHALL"));
    return t;
  }

  /** Opens connection `name` speaking `protocol`. */
  async connect(name: string, protocol: 2 | 3 = 3): Promise<void> {
    const client = await RespClient.connect(this.port);
    if (protocol === 3) await client.call("HELLO", "3");
    const id = String(await client.call("CLIENT", "ID"));
    this.connections.set(name, { client, protocol, id });
    this.ids.set(id, name);
  }

  /** The connection's CLIENT ID, to pass as a REDIRECT argument. */
  id(name: string): string {
    return this.connections.get(name)!.id;
  }

  /** Runs a command on `name`, writes down the messages before its reply, the reply, then everyone's messages. */
  async call(name: string, ...argv: string[]): Promise<RespValue> {
    const c = this.connections.get(name)!;
    this.lines.push(`${name}> ${this.named(argv).join(" ")}`);
    c.client.writeRaw(encodeCommand(argv));
    const reply = await this.readReply(name, c);
    const command = `${argv[0]} ${argv[1] ?? ""}`.toUpperCase();
    const idReply = command === "CLIENT GETREDIR" || command === "CLIENT TRACKINGINFO";
    this.lines.push(`${name}< ${idReply ? this.namedIds(show(reply)) : show(reply)}`);
    const word = argv[0]!.toUpperCase();
    if (word === "MULTI") this.inMulti.add(name);
    else if (word === "EXEC" || word === "DISCARD") this.inMulti.delete(name);
    await this.drain();
    return reply;
  }

  /**
   * Sends a command that blocks (BLMOVE …) on `name` and waits until the server counts it
   * blocked; receive() later writes down what it got.
   */
  async block(name: string, ...argv: string[]): Promise<void> {
    const c = this.connections.get(name)!;
    this.lines.push(`${name}> ${this.named(argv).join(" ")}`);
    this.waiting.add(name);
    c.client.writeRaw(encodeCommand(argv));
    await withFresh(this.port, (f) =>
      waitUntil(async () => (/blocked_clients:[1-9]/.test(String(await f.call("INFO", "clients"))) ? true : undefined), `${name}'s command blocked`),
    );
  }

  /** The reply `name`'s blocked command got, with the messages before it, then everyone's messages. */
  async receive(name: string): Promise<RespValue> {
    const c = this.connections.get(name)!;
    const reply = await this.readReply(name, c);
    this.lines.push(`${name}< ${show(reply)}`);
    this.waiting.delete(name);
    await this.drain();
    return reply;
  }

  /** Closes connection `name` (a redirect target leaving). */
  async close(name: string): Promise<void> {
    const c = this.connections.get(name)!;
    this.lines.push(`${name}: closed`);
    c.client.close();
    await c.client.closed;
    this.connections.delete(name);
    // The server notices the close in its next turn: a round trip elsewhere lets it.
    await withFresh(this.port, (f) => f.call("PING"));
  }

  /** Reads up to `name`'s next reply, writing down the messages before it. */
  private async readReply(name: string, c: Connection): Promise<RespValue> {
    for (;;) {
      const value = await c.client.read();
      if (!this.isMessage(c, value)) return value;
      this.lines.push(`${name}! ${this.namedIds(show(messageOf(value)))}`);
    }
  }

  /** A push (RESP3), or a pub/sub message on a subscribed RESP2 connection. */
  private isMessage(c: Connection, value: RespValue): boolean {
    if (pushOf(value) !== null) return true;
    return c.protocol === 2 && Array.isArray(value) && value[0] === "message";
  }

  /** Every connection's messages so far: each answers a PING after them. */
  private async drain(): Promise<void> {
    for (const [name, c] of this.connections) {
      if (this.inMulti.has(name) || this.waiting.has(name)) continue;
      c.client.writeRaw(encodeCommand(["PING"]));
      await this.readReply(name, c);
    }
  }

  private named(argv: readonly string[]): string[] {
    return argv.map((arg, i) => (i > 0 && argv[i - 1]!.toUpperCase() === "REDIRECT" ? this.nameOf(arg) : arg));
  }

  private nameOf(id: string): string {
    const name = this.ids.get(id);
    return name === undefined ? id : `#${name}`;
  }

  /** Integers that are connection IDs, written as names. */
  private namedIds(text: string): string {
    return text.replace(/":(\d+)"/g, (whole, id: string) => {
      const name = this.nameOf(id);
      return name === id ? whole : `"${name}"`;
    });
  }

  async closeAll(): Promise<void> {
    for (const c of this.connections.values()) c.client.close();
  }
}

/** A RESP3 push's items, or the value itself (a RESP2 message is an array). */
const pushOf = (value: RespValue): RespValue[] | null =>
  typeof value === "object" && value !== null && !Array.isArray(value) && "push" in value ? value.push : null;
const messageOf = (value: RespValue): RespValue => pushOf(value) ?? value;

async function withFresh<T>(port: number, body: (c: RespClient) => Promise<T>): Promise<T> {
  const c = await RespClient.connect(port);
  try {
    return await body(c);
  } finally {
    c.close();
  }
}

/** Plays `body` on redis-server, then on svc kv; the transcripts must be identical. Returns svc's. */
export async function expectSameTracking(servers: RedisAndKv, body: (t: TrackingTranscript) => Promise<void>): Promise<string[]> {
  const transcripts: string[][] = [];
  for (const server of [servers.redis, servers.kv]) {
    const t = await TrackingTranscript.open(server.port);
    try {
      await body(t);
    } finally {
      await t.closeAll();
    }
    transcripts.push(t.lines);
  }
  expect(transcripts[1]!.join("\n")).toBe(transcripts[0]!.join("\n"));
  return transcripts[1]!;
}
