/**
 * A minimal RESP2 client for tests that must see replies exactly as sent: status and bulk
 * strings stay distinct, and so do the null bulk and the null array. Replies are plain values:
 *
 *   +OK → { s: "OK" }   -ERR x → { e: "ERR x" }   :5 → 5n   $3 foo → "foo"
 *   $-1 → null          *-1 → { nullArray: true }  *2 … → [ …, … ]
 *
 * and RESP3's types after HELLO 3:
 *
 *   _ → { nil: true }   ,1.5 → { d: "1.5" }   (12 → { big: "12" }   #t → { b: true }   =txt:… → { v: "txt:…" }
 *   %2 → { map: [k, v, k, v] }   ~2 → { set: […] }   >3 → { push: […] }
 */
import type { Socket } from "bun";
import { WriteQueue } from "./wire.ts";

export type RespValue =
  | string
  | bigint
  | null
  | { s: string }
  | { e: string }
  | { nullArray: true }
  | RespValue[]
  | { nil: true }
  | { d: string }
  | { big: string }
  | { b: boolean }
  | { v: string }
  | { map: RespValue[] }
  | { set: RespValue[] }
  | { push: RespValue[] };

/** A reply as one line of JSON, integers marked ":5" so they stay apart from the bulk string "5". */
export const show = (v: RespValue): string => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `:${x}` : x));

/**
 * Reads `count` replies from `at`; undefined when they have not all arrived. A message or an
 * invalidation pushed between them is not one of them: the server wrote it out of band, in the
 * middle of the reply (a PUBLISH inside EXEC pushes the client its own message after EXEC's
 * array header), and it is put in `outOfBand`, as a client delivers it apart from the reply. A
 * subscription's confirmation is a push too, but a reply: inside EXEC it is one of the items.
 */
function parseItems(buf: Buffer, at: number, count: number, outOfBand: RespValue[]): { items: RespValue[]; next: number } | undefined {
  const items: RespValue[] = [];
  let next = at;
  while (items.length < count) {
    const item = parseAt(buf, next, outOfBand);
    if (item === undefined) return undefined;
    if (isOutOfBand(item.value)) outOfBand.push(item.value);
    else items.push(item.value);
    next = item.next;
  }
  return { items, next };
}

/** The pushes a server sends on its own rather than as a command's reply. */
const outOfBandKinds = new Set(["message", "pmessage", "smessage", "invalidate"]);

function isOutOfBand(v: RespValue): boolean {
  if (v === null || typeof v !== "object" || Array.isArray(v) || !("push" in v)) return false;
  const kind = v.push[0];
  return typeof kind === "string" && outOfBandKinds.has(kind);
}

/**
 * Parses one reply from `buf` at `at`; undefined when the buffer does not hold all of it yet.
 * `pushes`: the pushes the server wrote inside it (parseItems), which come before it.
 */
export function parseReply(buf: Buffer, at: number): { value: RespValue; next: number; pushes: RespValue[] } | undefined {
  const pushes: RespValue[] = [];
  const reply = parseAt(buf, at, pushes);
  return reply && { ...reply, pushes };
}

function parseAt(buf: Buffer, at: number, outOfBand: RespValue[]): { value: RespValue; next: number } | undefined {
  const eol = buf.indexOf("\r\n", at, "latin1");
  if (eol < 0) return undefined;
  const line = buf.toString("latin1", at + 1, eol);
  const after = eol + 2;
  switch (String.fromCharCode(buf[at]!)) {
    case "+":
      return { value: { s: line }, next: after };
    case "-":
      return { value: { e: line }, next: after };
    case ":":
      return { value: BigInt(line), next: after };
    case "$": {
      const length = Number(line);
      if (length < 0) return { value: null, next: after };
      if (buf.length < after + length + 2) return undefined;
      return { value: buf.toString("latin1", after, after + length), next: after + length + 2 };
    }
    case "=": {
      const length = Number(line);
      if (buf.length < after + length + 2) return undefined;
      return { value: { v: buf.toString("latin1", after, after + length) }, next: after + length + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: { nullArray: true }, next: after };
      const r = parseItems(buf, after, count, outOfBand);
      return r && { value: r.items, next: r.next };
    }
    case "%": {
      const r = parseItems(buf, after, Number(line) * 2, outOfBand);
      return r && { value: { map: r.items }, next: r.next };
    }
    case "~": {
      const r = parseItems(buf, after, Number(line), outOfBand);
      return r && { value: { set: r.items }, next: r.next };
    }
    case ">": {
      const r = parseItems(buf, after, Number(line), outOfBand);
      return r && { value: { push: r.items }, next: r.next };
    }
    case "_":
      return { value: { nil: true }, next: after };
    case ",":
      return { value: { d: line }, next: after };
    case "(":
      return { value: { big: line }, next: after };
    case "#":
      return { value: { b: line === "t" }, next: after };
    default:
      throw new Error(`bad reply byte ${buf[at]} at ${at}`);
  }
}

/** Encodes a command as a RESP array of bulk strings (arguments are latin1 byte strings). */
export function encodeCommand(argv: readonly string[]): Buffer {
  let out = `*${argv.length}\r\n`;
  for (const arg of argv) out += `$${arg.length}\r\n${arg}\r\n`;
  return Buffer.from(out, "latin1");
}

export class RespClient {
  private pending = Buffer.alloc(0);
  /** Values parsed from `pending` and not read yet (a reply's out-of-band pushes, then the reply). */
  private readonly parsed: RespValue[] = [];
  private readonly waiters: ((value: RespValue) => void)[] = [];
  private readonly outgoing = new WriteQueue();
  private closedResolve!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.closedResolve = resolve));
  isClosed = false;

  private constructor(private socket: Socket<undefined> | null = null) {}

  static async connect(port: number, hostname = "127.0.0.1"): Promise<RespClient> {
    const client = new RespClient();
    client.socket = await Bun.connect({
      hostname,
      port,
      socket: {
        data: (_socket, chunk) => client.onData(chunk),
        drain: () => client.pump(),
        close: () => client.onClose(),
        error: () => client.onClose(),
      },
    });
    return client;
  }

  private onData(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    while (this.waiters.length > 0) {
      const value = this.next();
      if (value === undefined) break;
      this.waiters.shift()!(value);
    }
  }

  /** The next value received and not yet read: a parsed one, or one parsed now from `pending`. */
  private next(): RespValue | undefined {
    if (this.parsed.length === 0) {
      const reply = parseReply(this.pending, 0);
      if (reply === undefined) return undefined;
      this.pending = this.pending.subarray(reply.next);
      // Pushes written inside the reply arrived before it ended: they are read first.
      this.parsed.push(...reply.pushes, reply.value);
    }
    return this.parsed.shift();
  }

  private onClose(): void {
    this.isClosed = true;
    this.closedResolve();
  }

  /** Sends raw bytes (for protocol tests); replies are read with `read()`. */
  writeRaw(bytes: string | Uint8Array): void {
    this.outgoing.push(bytes);
    this.pump();
  }

  private pump(): void {
    if (!this.isClosed) this.outgoing.writeTo(this.socket!);
  }

  /** The next reply if it has already arrived and nobody is waiting for an earlier one. */
  tryRead(): RespValue | undefined {
    if (this.waiters.length > 0) return undefined;
    return this.next();
  }

  /** The next reply. */
  read(): Promise<RespValue> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.onData(Buffer.alloc(0));
    });
  }

  /** Sends every command in one write (a pipeline) and returns their replies in order. */
  async pipeline(commands: readonly (readonly string[])[]): Promise<RespValue[]> {
    const replies = commands.map(() => this.read());
    this.writeRaw(Buffer.concat(commands.map(encodeCommand)));
    return Promise.all(replies);
  }

  async call(...argv: string[]): Promise<RespValue> {
    const [reply] = await this.pipeline([argv]);
    return reply!;
  }

  close(): void {
    this.socket?.end();
  }
}

/** Runs `body` with a fresh connection to `port`, closed afterwards whatever happens. */
export async function withClient<T>(port: number, body: (c: RespClient) => Promise<T>): Promise<T> {
  const client = await RespClient.connect(port);
  try {
    return await body(client);
  } finally {
    client.close();
  }
}
