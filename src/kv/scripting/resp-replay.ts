/**
 * A reply already encoded (a script's, from the native side) written again through the Reply
 * writers, so it reaches a RESP connection and the REST API's JSON alike, in the client's
 * protocol. The five RESP2 types, and the RESP3 ones a script can return (native/script's
 * lua_to_resp.rs): map, set, double, big number, verbatim string, boolean — each written as
 * Redis writes it to a RESP2 client when the client speaks RESP2.
 */
import type { Reply } from "../kit/reply.ts";
import { parseLongLong } from "../resp/parser.ts";

const CR = 0x0d;
const MINUS = 0x2d;
const LF = 0x0a;
const COLON = 0x3a;
const DOLLAR = 0x24;
const ASTERISK = 0x2a;
const O = 0x4f;
const K = 0x4b;
const integerText = /^-?\d{1,19}$/;

/** Integers of at most this many characters are exact as numbers, and read without a BigInt. */
const numberDigitsMax = 15;

/** The decimal integer `text` holds (a number while exact, else a bigint); a RangeError for anything else. */
function integerOf(text: string): number | bigint {
  if (!integerText.test(text)) throw new RangeError(`a script's reply has '${text.slice(0, 32)}' where an integer belongs`);
  return text.length <= numberDigitsMax ? Number(text) : BigInt(text);
}

/**
 * Writes the one reply `bytes[0, end)` holds onto `reply`. `counted`: the reply is an error the
 * server's statistics already hold (a script passing on its command's error), not counted again.
 */
export function replayResp(bytes: Buffer, reply: Reply, counted = false, end = bytes.length): void {
  replay(bytes, reply, counted, end, replayAt);
}

/** replayResp reading every item by its line as text: the reference its fast paths are tested against. */
export function replayRespByLines(bytes: Buffer, reply: Reply, counted = false, end = bytes.length): void {
  replay(bytes, reply, counted, end, replayByLines);
}

/** How one item from `at` is replayed: returns where the next starts. */
type ItemReplay = (bytes: Buffer, at: number, reply: Reply) => number;

/**
 * Where the reply being replayed ends in its buffer (the mailbox holds more): every read is
 * bounded by it rather than by a view of the buffer made per reply.
 */
let replayEnd = 0;

function replay(bytes: Buffer, reply: Reply, counted: boolean, end: number, item: ItemReplay): void {
  replayEnd = end;
  let next: number;
  if (counted && bytes[0] === MINUS) {
    const errorLine = line(bytes, 0);
    reply.error(errorLine.text, true);
    next = errorLine.next;
  } else next = item(bytes, 0, reply);
  if (next !== end) throw new RangeError(`a script's reply has ${end - next} bytes after its end`);
}

/** Where the line shortInteger last read ends: the index of its CR. */
let shortLineEnd = 0;

/**
 * The integer on the line from `at`, read from the bytes (parseLongLong, the request parser's),
 * or NaN when the line is not one of at most numberDigitsMax chars — a longer one, or one in a
 * form only the line's text takes (a leading zero), goes integerOf's way; sets shortLineEnd.
 * Every integer reply and bulk length of a script's reply passes here: making a string of each
 * line and testing it against a pattern cost more than the rest of the replay.
 */
function shortInteger(bytes: Buffer, at: number): number {
  const end = Math.min(replayEnd, at + numberDigitsMax + 1);
  let cr = at;
  while (cr < end && bytes[cr] !== CR) cr++;
  if (cr === end || bytes[cr + 1] !== LF) return Number.NaN;
  shortLineEnd = cr;
  return parseLongLong(bytes, at, cr);
}

/**
 * The line after the type byte at `at`, and where the next item starts. "OK", the status most
 * replies are, is not made a string anew each time.
 */
function line(bytes: Buffer, at: number): { text: string; next: number } {
  const cr = bytes.indexOf(CR, at + 1);
  if (cr < 0 || cr + 1 >= replayEnd || bytes[cr + 1] !== 0x0a) throw new RangeError("a script's reply line has no CRLF");
  const ok = cr === at + 3 && bytes[at + 1] === O && bytes[at + 2] === K;
  return { text: ok ? "OK" : bytes.toString("latin1", at + 1, cr), next: cr + 2 };
}

function replayAt(bytes: Buffer, at: number, reply: Reply): number {
  if (at >= replayEnd) throw new RangeError("a script's reply ends before its last item");
  const type = bytes[at]!;
  if (type === COLON || type === DOLLAR) {
    const n = shortInteger(bytes, at + 1);
    const next = shortLineEnd + 2;
    if (type === COLON && !Number.isNaN(n)) {
      reply.integer(n);
      return next;
    }
    if (n === -1) {
      reply.bulk(null);
      return next;
    }
    if (n >= 0 && next + n + 2 <= replayEnd) {
      reply.bulkBytes(bytes, next, next + n);
      return next + n + 2;
    }
  } else if (type === ASTERISK) {
    // An array's count read from its bytes, as lengths are: BullMQ's scripts answer arrays.
    const count = shortInteger(bytes, at + 1);
    if (count >= 0) {
      reply.array(count);
      return replayItems(bytes, shortLineEnd + 2, count, reply, replayAt);
    }
  }
  return replayLine(bytes, at, reply, replayAt);
}

const replayByLines: ItemReplay = (bytes, at, reply) => replayLine(bytes, at, reply, replayByLines);

/**
 * One item read by its line as text: statuses, errors, arrays, and what replayAt's fast paths
 * leave. An array's items are replayed by `item`.
 */
function replayLine(bytes: Buffer, at: number, reply: Reply, item: ItemReplay): number {
  const type = String.fromCharCode(bytes[at]!);
  const { text, next } = line(bytes, at);
  switch (type) {
    case "+":
      reply.simple(text);
      return next;
    case "-":
      reply.error(text);
      return next;
    case ":": {
      const n = integerOf(text);
      reply.integer(typeof n === "number" || n < BigInt(Number.MIN_SAFE_INTEGER) || n > BigInt(Number.MAX_SAFE_INTEGER) ? n : Number(n));
      return next;
    }
    case "$": {
      const length = Number(integerOf(text));
      if (length < 0) {
        reply.bulk(null);
        return next;
      }
      if (next + length + 2 > replayEnd) throw new RangeError("a script's reply ends inside a bulk string");
      reply.bulkBytes(bytes, next, next + length);
      return next + length + 2;
    }
    case "*": {
      const count = Number(integerOf(text));
      if (count < 0) {
        reply.array(null);
        return next;
      }
      reply.array(count);
      return replayItems(bytes, next, count, reply, item);
    }
    case "%": {
      const pairs = Number(integerOf(text));
      reply.map(pairs);
      return replayItems(bytes, next, pairs * 2, reply, item);
    }
    case "~": {
      const count = Number(integerOf(text));
      reply.set(count);
      return replayItems(bytes, next, count, reply, item);
    }
    case "_":
      reply.bulk(null);
      return next;
    case "#":
      if (text !== "t" && text !== "f") throw new RangeError(`a script's reply has the boolean '${text.slice(0, 32)}'`);
      reply.boolean(text === "t");
      return next;
    case ",":
      reply.double(doubleOf(text), text);
      return next;
    case "(":
      reply.bigNumber(text);
      return next;
    case "=": {
      const length = Number(integerOf(text));
      if (length < 4 || next + length + 2 > bytes.length) throw new RangeError("a script's reply ends inside a verbatim string");
      reply.verbatim(bytes.toString("latin1", next + 4, next + length), bytes.toString("latin1", next, next + 3));
      return next + length + 2;
    }
    default:
      throw new RangeError(`a script's reply has an unknown type byte '${type}'`);
  }
}

/** `count` items from `at`, each replayed by `item`; returns where the next starts. */
function replayItems(bytes: Buffer, at: number, count: number, reply: Reply, item: ItemReplay): number {
  let itemAt = at;
  for (let i = 0; i < count; i++) itemAt = item(bytes, itemAt, reply);
  return itemAt;
}

/** A double's text as C's %.17g writes it ("inf", "-inf", "nan" and "-nan" included) as a number. */
function doubleOf(text: string): number {
  if (text === "inf") return Infinity;
  if (text === "-inf") return -Infinity;
  if (text === "nan" || text === "-nan") return Number.NaN;
  const n = Number(text);
  if (Number.isNaN(n)) throw new RangeError(`a script's reply has '${text.slice(0, 32)}' where a double belongs`);
  return n;
}
