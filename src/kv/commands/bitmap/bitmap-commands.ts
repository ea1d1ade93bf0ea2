/**
 * The bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO. A bitmap
 * is an ordinary string value; reads take it in whichever form it is held (a plain latin1 string
 * is read without conversion), writes turn it into a MutableString once and change it in place,
 * so a SETBIT costs O(1) and a BITFIELD write O(bits), however long the string.
 *
 * Arguments are checked, and keys looked up, in the order Redis 7.0 does both, so the same
 * request gets the same error (or the same early answer for a missing key).
 */
import { parseInt64, parseSmallInteger } from "../../text/args.ts";
import { deleteDestination, getStringValue } from "../../kit/lookup.ts";
import type { CommandSpec, Exec } from "../../kit/spec.ts";
import { KvError, notAnInteger, syntaxError } from "../../text/errors.ts";
import { bytesOf, MutableString } from "../../types/string/bytes.ts";
import { byteAt, parseBitOffset, parseIndex, parseRangeUnit, reversedNegatives, writableString } from "./bit-args.ts";
import { type BitRange, clampRange, countBits, findBit, wholeString } from "../../types/bitmap/bit-range.ts";
import { bitfieldCommand } from "./bitfield-command.ts";
import { type CombineOp, combine, invert } from "../../types/bitmap/kernels.ts";

const bitValueError = () => new KvError("ERR bit is not an integer or out of range");

// ---- SETBIT, GETBIT ---------------------------------------------------------------------------

function setbit(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const offset = parseBitOffset(x, argv[2]!);
  // Anything but "0" and "1" is refused with the same error, so the short-integer reader will do.
  const bit = parseSmallInteger(argv[3]!);
  if (bit !== 0 && bit !== 1) throw bitValueError();
  const index = Math.floor(offset / 8);
  const mask = 0x80 >> (offset % 8);
  // Setting a bit a plain string already has changes nothing: Redis reports no change to WATCH,
  // and we keep the compact form rather than converting it.
  const peek = x.db.get(key);
  if (typeof peek === "string" && index < peek.length && ((peek.charCodeAt(index) & mask) !== 0 ? 1 : 0) === bit) {
    getStringValue(x, key); // records the read, as the write path's lookup would
    return x.reply.integer(bit);
  }
  const { target, created, grown } = writableString(x, key, index + 1);
  const bytes = target.bytes;
  const old = (bytes[index]! & mask) === 0 ? 0 : 1;
  if (old !== bit) {
    bytes[index] = bit === 1 ? bytes[index]! | mask : bytes[index]! & ~mask;
    target.changed();
  }
  // One change, as Redis counts it, if the bit changed or the string was made or grew — and
  // making it counted already (Keyspace.set).
  if (old !== bit || created || grown) {
    if (!created) x.db.modified(key);
    x.db.notify("setbit", key);
  }
  x.reply.integer(old);
}

function getbit(x: Exec, argv: string[]): void {
  const offset = parseBitOffset(x, argv[2]!);
  const value = getStringValue(x, argv[1]!);
  const byte = value === undefined ? 0 : byteAt(value, Math.floor(offset / 8));
  x.reply.integer((byte >> (7 - (offset % 8))) & 1);
}

// ---- BITCOUNT, BITPOS -------------------------------------------------------------------------

/** BITCOUNT key [start end [BYTE|BIT]] */
function bitcount(x: Exec, argv: string[]): void {
  const value = getStringValue(x, argv[1]!);
  if (value === undefined) return x.reply.integer(0);
  let range: BitRange | null;
  if (argv.length === 2) range = wholeString(value.length);
  else if (argv.length === 4 || argv.length === 5) {
    const start = parseIndex(argv[2]!);
    const end = parseIndex(argv[3]!);
    // Redis answers this case before it looks at the unit.
    if (reversedNegatives(start, end, argv[2]!, argv[3]!)) return x.reply.integer(0);
    const unit = argv.length === 5 ? parseRangeUnit(argv[4]!) : "byte";
    range = clampRange(start, end, unit, value.length);
  } else throw syntaxError();
  x.reply.integer(range === null ? 0 : countBits(value, range));
}

/** BITPOS key bit [start [end [BYTE|BIT]]] */
function bitpos(x: Exec, argv: string[]): void {
  const bitArg = parseInt64(argv[2]!);
  if (bitArg === null) throw notAnInteger();
  if (bitArg !== 0n && bitArg !== 1n) throw new KvError("ERR The bit argument must be 1 or 0.");
  const bit = bitArg === 1n ? 1 : 0;
  // A missing key is an endless run of zeros.
  const value = getStringValue(x, argv[1]!);
  if (value === undefined) return x.reply.integer(bit === 1 ? -1 : 0);
  let range: BitRange | null;
  const endGiven = argv.length >= 5;
  if (argv.length === 3) range = wholeString(value.length);
  else if (argv.length <= 6) {
    // Redis reads the unit before the end.
    const start = parseIndex(argv[3]!);
    const unit = argv.length === 6 ? parseRangeUnit(argv[5]!) : "byte";
    const end = endGiven ? parseIndex(argv[4]!) : -1;
    range = clampRange(start, end, unit, value.length);
  } else throw syntaxError();
  if (range === null) return x.reply.integer(-1);
  const position = findBit(value, bit, range);
  // Looking for a clear bit without an explicit end, the string counts as padded with zeros: the
  // answer is then the first bit past its end.
  x.reply.integer(position === -1 && bit === 0 && !endGiven ? range.lastBit + 1 : position);
}

// ---- BITOP ------------------------------------------------------------------------------------

type BitOp = CombineOp | "not";

function parseBitOp(text: string): BitOp {
  const op = text.toLowerCase();
  if (op === "and" || op === "or" || op === "xor" || op === "not") return op;
  throw syntaxError();
}

/** BITOP op destkey key [key ...]: shorter sources count as zero-padded; an empty result deletes destkey. */
function bitop(x: Exec, argv: string[]): void {
  const op = parseBitOp(argv[1]!);
  if (op === "not" && argv.length !== 4) throw new KvError("ERR BITOP NOT must be called with a single source key.");
  const dest = argv[2]!;
  const sources: Uint8Array[] = [];
  for (let i = 3; i < argv.length; i++) {
    const value = getStringValue(x, argv[i]!);
    sources.push(value === undefined ? new Uint8Array(0) : bytesOf(value));
  }
  const length = Math.max(...sources.map((s) => s.length));
  if (length === 0) {
    deleteDestination(x, dest);
    return x.reply.integer(0);
  }
  const result = MutableString.ofLength(length);
  const bytes = result.bytes;
  bytes.set(sources[0]!);
  if (op === "not") invert(bytes);
  for (let i = 1; i < sources.length && op !== "not"; i++) {
    const source = sources[i]!;
    combine(op, bytes, source);
    if (op === "and") bytes.fill(0, source.length);
  }
  x.db.set(dest, result);
  x.db.notify("set", dest);
  x.reply.integer(length);
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];

export const bitmapCommands: readonly CommandSpec[] = [
  {
    name: "setbit",
    arity: 4,
    flags: ["write", "denyoom"],
    group: "bitmap",
    summary: "Sets or clears the bit at offset of the string value.",
    keys: one,
    run: setbit,
  },
  { name: "getbit", arity: 3, flags: ["readonly", "fast"], group: "bitmap", summary: "Returns a bit value by offset.", keys: one, run: getbit },
  {
    name: "bitcount",
    arity: -2,
    flags: ["readonly"],
    group: "bitmap",
    summary: "Counts the number of set bits (population counting) in a string.",
    keys: one,
    run: bitcount,
  },
  { name: "bitpos", arity: -3, flags: ["readonly"], group: "bitmap", summary: "Finds the first set (1) or clear (0) bit in a string.", keys: one, run: bitpos },
  {
    name: "bitop",
    arity: -4,
    flags: ["write", "denyoom"],
    group: "bitmap",
    summary: "Performs bitwise operations on multiple strings, and stores the result.",
    keys: [2, -1, 1],
    run: bitop,
  },
  {
    name: "bitfield",
    arity: -2,
    flags: ["write", "denyoom"],
    group: "bitmap",
    summary: "Performs arbitrary bitfield integer operations on strings.",
    keys: one,
    run: (x, argv) => bitfieldCommand(x, argv, false),
  },
  {
    name: "bitfield_ro",
    arity: -2,
    flags: ["readonly", "fast"],
    group: "bitmap",
    summary: "Performs arbitrary read-only bitfield integer operations on strings.",
    keys: one,
    run: (x, argv) => bitfieldCommand(x, argv, true),
  },
];
