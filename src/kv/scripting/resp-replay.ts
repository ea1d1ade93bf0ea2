/**
 * A RESP2 reply already encoded (a script's, from the native side) written again through the
 * Reply writers, so it reaches a RESP connection and the REST API's JSON alike. Only the five
 * RESP2 types occur: status, error, integer, bulk string, array.
 */
import type { Reply } from "../reply.ts";

const CR = 0x0d;
const MINUS = 0x2d;
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
  const view = end === bytes.length ? bytes : bytes.subarray(0, end);
  let next: number;
  if (counted && view[0] === MINUS) {
    const errorLine = line(view, 0);
    reply.error(errorLine.text, true);
    next = errorLine.next;
  } else next = replayAt(view, 0, reply);
  if (next !== end) throw new RangeError(`a script's reply has ${end - next} bytes after its end`);
}

/** The line after the type byte at `at`, and where the next item starts. */
function line(bytes: Buffer, at: number): { text: string; next: number } {
  const cr = bytes.indexOf(CR, at + 1);
  if (cr < 0 || bytes[cr + 1] !== 0x0a) throw new RangeError("a script's reply line has no CRLF");
  return { text: bytes.toString("latin1", at + 1, cr), next: cr + 2 };
}

function replayAt(bytes: Buffer, at: number, reply: Reply): number {
  if (at >= bytes.length) throw new RangeError("a script's reply ends before its last item");
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
      if (next + length + 2 > bytes.length) throw new RangeError("a script's reply ends inside a bulk string");
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
      let item = next;
      for (let i = 0; i < count; i++) item = replayAt(bytes, item, reply);
      return item;
    }
    default:
      throw new RangeError(`a script's reply has an unknown type byte '${type}'`);
  }
}
