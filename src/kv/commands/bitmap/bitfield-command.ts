/**
 * BITFIELD and BITFIELD_RO: a list of GET, SET and INCRBY operations on integer fields of one
 * string, with OVERFLOW switching the policy for the operations after it. As in Redis, every
 * operation is parsed before any runs (a bad one fails the whole command), the string is grown
 * once to cover the farthest write, and the reply has one entry per operation — nil for a write
 * that OVERFLOW FAIL refused.
 */
import { getStringValue } from "../../kit/lookup.ts";
import type { Exec } from "../../kit/spec.ts";
import { KvError, syntaxError } from "../../text/errors.ts";
import type { MutableString } from "../../types/string/bytes.ts";
import { byteAt, parseBitOffset, parseInt64Arg, writableString } from "./bit-args.ts";
import { addInField, type FieldType, fieldValue, type OverflowPolicy, parseFieldType, readField, writeField } from "../../types/bitmap/bitfield.ts";

interface FieldOp {
  readonly kind: "get" | "set" | "incrby";
  readonly type: FieldType;
  /** In bits. */
  readonly offset: number;
  /** SET's value or INCRBY's increment. */
  readonly operand: bigint;
  readonly policy: OverflowPolicy;
}

function parsePolicy(text: string): OverflowPolicy {
  const word = text.toLowerCase();
  if (word === "wrap" || word === "sat" || word === "fail") return word;
  throw new KvError("ERR Invalid OVERFLOW type specified");
}

/** The operations of argv[2..], checked in Redis's order: name, type, offset, then value. */
function parseOps(x: Exec, argv: readonly string[]): FieldOp[] {
  const ops: FieldOp[] = [];
  let policy: OverflowPolicy = "wrap";
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!.toLowerCase();
    const remaining = argv.length - i - 1;
    if (word === "overflow" && remaining >= 1) {
      policy = parsePolicy(argv[++i]!);
      continue;
    }
    const kind = word === "get" && remaining >= 2 ? "get" : (word === "set" || word === "incrby") && remaining >= 3 ? word : null;
    if (kind === null) throw syntaxError();
    const type = parseFieldType(argv[i + 1]!);
    const offset = parseBitOffset(x, argv[i + 2]!, type.bits);
    const operand = kind === "get" ? 0n : parseInt64Arg(argv[i + 3]!);
    ops.push({ kind, type, offset, operand, policy });
    i += kind === "get" ? 2 : 3;
  }
  return ops;
}

/**
 * Bytes one field can span: 64 bits starting anywhere in a byte reach into a ninth. Reads copy
 * that window out of the value, so they work alike on both string forms and past the end.
 */
const fieldWindowBytes = 9;
const window = new Uint8Array(fieldWindowBytes);

function readAt(value: string | MutableString | undefined, offset: number, bits: number): bigint {
  const first = Math.floor(offset / 8);
  for (let i = 0; i < fieldWindowBytes; i++) window[i] = value === undefined ? 0 : byteAt(value, first + i);
  return readField(window, offset % 8, bits);
}

/** What a SET or INCRBY did: refused by FAIL's overflow, or written, changing the field's bits or not. */
type WriteOutcome = "refused" | "same" | "changed";

/**
 * Runs one SET or INCRBY; the reply is the old value for SET, the new one for INCRBY. OVERFLOW
 * FAIL refuses a write that would overflow.
 */
function write(x: Exec, target: MutableString, bytes: Uint8Array, op: FieldOp): WriteOutcome {
  const raw = readAt(target, op.offset, op.type.bits);
  const old = fieldValue(op.type, raw);
  // An unsigned SET value is taken as Redis takes it, as the uint64 with the same bits.
  const result =
    op.kind === "incrby"
      ? addInField(op.type, old, op.operand, op.policy)
      : addInField(op.type, op.type.signed ? op.operand : BigInt.asUintN(64, op.operand), 0n, op.policy);
  if (result === null) {
    x.reply.bulk(null);
    return "refused";
  }
  writeField(bytes, op.offset, op.type.bits, result);
  x.reply.integer(op.kind === "incrby" ? result : old);
  return readAt(target, op.offset, op.type.bits) === raw ? "same" : "changed";
}

export function bitfieldCommand(x: Exec, argv: string[], readOnly: boolean): void {
  const key = argv[1]!;
  const ops = parseOps(x, argv);
  let writeEndBytes = 0;
  for (const op of ops) if (op.kind !== "get") writeEndBytes = Math.max(writeEndBytes, Math.floor((op.offset + op.type.bits - 1) / 8) + 1);
  let value: string | MutableString | undefined;
  let target: MutableString | null = null;
  let created = false;
  let grown = false;
  // Only GETs: Redis reads the key with its read lookup, which counts a keyspace hit or miss
  // even though BITFIELD is a write command.
  if (writeEndBytes === 0) value = getStringValue({ ...x, countsReads: true }, key);
  else if (readOnly) throw new KvError("ERR BITFIELD_RO only supports the GET subcommand");
  else {
    ({ target, created, grown } = writableString(x, key, writeEndBytes));
    value = target;
  }
  // Growing may have replaced the buffer, so take the view only now.
  const bytes = target?.bytes;
  x.reply.array(ops.length);
  // As Redis counts them: each write made, if it changed the field's bits or the string was
  // made or grown for the command; a write FAIL's overflow refused is no change.
  let changes = 0;
  for (const op of ops) {
    if (op.kind === "get") x.reply.integer(fieldValue(op.type, readAt(value, op.offset, op.type.bits)));
    else {
      const outcome = write(x, target!, bytes!, op);
      if (outcome === "changed" || (outcome === "same" && (created || grown))) changes++;
    }
  }
  if (target !== null) target.changed();
  if (changes === 0) return;
  // Making the key counted one change already (Keyspace.set); each further one counts once more.
  if (!created) x.db.modified(key);
  x.engine.dirty += changes - 1;
  x.db.notify("setbit", key);
}
