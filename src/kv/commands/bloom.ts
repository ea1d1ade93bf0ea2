/**
 * The BF.* commands: RedisBloom's Bloom filter commands with its replies and errors. RedisBloom
 * registers them as module commands (arity -1, key at 1), so each one checks its own argument
 * count and answers "wrong number of arguments" itself — inside MULTI such a command is queued
 * and fails at EXEC, as with RedisBloom.
 *
 * An add marks its key modified whenever it reaches the filter, even when every item was
 * already there: RedisBloom replicates such a command as it is, and Redis signals (for WATCH)
 * every key a module opened for writing. The append-only file therefore records it too. A
 * refused command (ERR item exists, WRONGTYPE) marks nothing; Redis would still signal WATCH.
 */
import { parseInt64 } from "../text/args.ts";
import { arityError, wrongType } from "../text/errors.ts";
import { getValue } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { AddOutcome, BloomChain } from "../types/bloom/chain.ts";
import { latin1Text } from "../types/string/bytes.ts";
import { chunkAt, decodeHeader, encodeHeader, headerIterator, loadChunk } from "../types/bloom/bloom-dump.ts";
import {
  couldNotCreate,
  invalidInformation,
  itemExists,
  loadChunkBadIterator,
  nonScalingFull,
  notFound,
  scanDumpBadIterator,
} from "../types/bloom/bloom-errors.ts";
import { type ChainOptions, defaultChainOptions, parseInsert, parseReserve } from "../types/bloom/options.ts";

/** The chain at `key`, undefined when missing; WRONGTYPE for any other value. */
function getChain(x: Exec, key: string): BloomChain | undefined {
  const value = getValue(x, key);
  if (value !== undefined && !(value instanceof BloomChain)) throw wrongType();
  return value;
}

function createChain(x: Exec, key: string, options: ChainOptions): BloomChain {
  const chain = BloomChain.create(options.capacity, options.errorRate, options.expansion, options.scaling);
  if (chain === null) throw couldNotCreate();
  x.db.set(key, chain);
  return chain;
}

function reserve(x: Exec, argv: string[]): void {
  const options = parseReserve(argv);
  const key = argv[1]!;
  if (getChain(x, key) !== undefined) throw itemExists();
  createChain(x, key, options);
  x.reply.simple("OK");
}

const outcomeErrors: Partial<Record<AddOutcome, string>> = {
  [AddOutcome.Full]: nonScalingFull,
  // RedisBloom answers 1 when it cannot add a sub-filter, although the item was not added; we
  // answer an error so that no client believes a later BF.EXISTS will find it.
  [AddOutcome.CannotGrow]: couldNotCreate().message,
};

/** Adds to the chain at `key` (created with `options` when missing, unless `create` is false). */
function addItems(x: Exec, key: string, items: string[], from: number, options: ChainOptions, create: boolean): AddOutcome[] {
  let chain = getChain(x, key);
  if (chain === undefined) {
    if (!create) throw notFound();
    chain = createChain(x, key, options);
  }
  x.db.modified(key);
  return chain.addAll(items, from);
}

function replyOutcome(x: Exec, outcome: AddOutcome): void {
  const error = outcomeErrors[outcome];
  if (error === undefined) x.reply.integer(outcome);
  else x.reply.error(error);
}

/** The array BF.MADD and BF.INSERT answer: one reply per item handled, up to a refusal. */
function replyOutcomes(x: Exec, outcomes: readonly AddOutcome[]): void {
  x.reply.array(outcomes.length);
  for (const outcome of outcomes) replyOutcome(x, outcome);
}

function add(x: Exec, argv: string[]): void {
  if (argv.length !== 3) throw arityError("bf.add");
  const [outcome] = addItems(x, argv[1]!, argv, 2, defaultChainOptions, true);
  replyOutcome(x, outcome!);
}

function madd(x: Exec, argv: string[]): void {
  if (argv.length < 3) throw arityError("bf.madd");
  replyOutcomes(x, addItems(x, argv[1]!, argv, 2, defaultChainOptions, true));
}

function insert(x: Exec, argv: string[]): void {
  const { options, create, itemsAt } = parseInsert(argv);
  replyOutcomes(x, addItems(x, argv[1]!, argv, itemsAt, options, create));
}

/**
 * Membership of argv[2..]. RedisBloom answers 0 for a key holding another type, not WRONGTYPE:
 * its check treats every lookup that is not a Bloom filter as an empty one.
 */
function membership(x: Exec, argv: string[]): Uint8Array {
  const value = getValue(x, argv[1]!);
  return value instanceof BloomChain ? value.hasAll(argv, 2) : new Uint8Array(argv.length - 2);
}

function exists(x: Exec, argv: string[]): void {
  if (argv.length !== 3) throw arityError("bf.exists");
  x.reply.integer(membership(x, argv)[0]!);
}

function mexists(x: Exec, argv: string[]): void {
  if (argv.length < 3) throw arityError("bf.mexists");
  const found = membership(x, argv);
  x.reply.array(found.length);
  for (const f of found) x.reply.integer(f);
}

function card(x: Exec, argv: string[]): void {
  if (argv.length !== 2) throw arityError("bf.card");
  x.reply.integer(getChain(x, argv[1]!)?.size ?? 0);
}

/** BF.INFO's fields: the name in the full reply, the word that asks for it alone, and its value. */
const infoFields: readonly { name: string; word: string; value: (chain: BloomChain) => bigint | number | null }[] = [
  { name: "Capacity", word: "CAPACITY", value: (chain) => chain.capacity },
  { name: "Size", word: "SIZE", value: (chain) => chain.reportedBytes },
  { name: "Number of filters", word: "FILTERS", value: (chain) => chain.filters.length },
  { name: "Number of items inserted", word: "ITEMS", value: (chain) => chain.size },
  // A NONSCALING chain has no expansion rate: nil.
  { name: "Expansion rate", word: "EXPANSION", value: (chain) => (chain.scaling ? chain.expansion : null) },
];

function replyInfoValue(x: Exec, value: bigint | number | null): void {
  if (value === null) x.reply.bulk(null);
  else x.reply.integer(value);
}

/** BF.INFO key: every field (a map in RESP3); BF.INFO key FIELD: that value in a one-element array. */
function info(x: Exec, argv: string[]): void {
  if (argv.length !== 2 && argv.length !== 3) throw arityError("bf.info");
  const chain = getChain(x, argv[1]!);
  if (chain === undefined) throw notFound();
  if (argv.length === 3) {
    const word = argv[2]!.toUpperCase();
    const field = infoFields.find((f) => f.word === word);
    if (field === undefined) throw invalidInformation();
    x.reply.array(1);
    return replyInfoValue(x, field.value(chain));
  }
  x.reply.map(infoFields.length);
  for (const field of infoFields) {
    x.reply.simple(field.name);
    replyInfoValue(x, field.value(chain));
  }
}

/**
 * C's printf "%g": six significant digits, trailing zeros dropped, exponent form below 1e-4 and
 * from 1e6 with at least two exponent digits — how BF.DEBUG prints each error rate.
 */
export function formatG(n: number): string {
  if (n === 0) return "0";
  const [mantissa, exponentText] = n.toExponential(5).split("e") as [string, string];
  const exponent = Number(exponentText);
  const trim = (digits: string) => (digits.includes(".") ? digits.replace(/\.?0+$/, "") : digits);
  if (exponent < -4 || exponent >= 6) {
    return `${trim(mantissa)}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return trim(n.toFixed(5 - exponent));
}

/** BF.DEBUG key: the chain's item count, then one line per sub-filter, in RedisBloom's words. */
function debug(x: Exec, argv: string[]): void {
  if (argv.length !== 2) throw arityError("bf.debug");
  const chain = getChain(x, argv[1]!);
  if (chain === undefined) throw notFound();
  x.reply.array(1 + chain.filters.length);
  x.reply.bulk(`size:${chain.size}`);
  for (const f of chain.filters) {
    const s = f.sizing;
    x.reply.bulk(`bytes:${s.bytes} bits:${s.bitCount} hashes:${s.hashes} hashwidth:64 capacity:${s.capacity} size:${f.size} ratio:${formatG(s.errorRate)}`);
  }
}

/**
 * BF.SCANDUMP key iterator: [1, header] for 0, then [next iterator, bits] chunk by chunk, and
 * [0, ""] past the end (or before the start). RedisBloom looks the key up before the iterator.
 */
function scandump(x: Exec, argv: string[]): void {
  if (argv.length !== 3) throw arityError("bf.scandump");
  const chain = getChain(x, argv[1]!);
  if (chain === undefined) throw notFound();
  const iterator = parseInt64(argv[2]!);
  if (iterator === null) throw scanDumpBadIterator();
  const chunk = iterator === 0n ? { next: headerIterator, data: encodeHeader(chain) } : chunkAt(chain, iterator);
  x.reply.array(2);
  x.reply.integer(chunk.next);
  x.reply.bulk(latin1Text(chunk.data));
}

/**
 * BF.LOADCHUNK key iterator data: the header (iterator 1) creates a missing key; any other
 * chunk needs the key to be there and is copied into its bits. As in RedisBloom, a header sent
 * to an existing key is taken for a chunk, and refused as one ("ERR received bad data").
 */
function loadchunk(x: Exec, argv: string[]): void {
  if (argv.length !== 4) throw arityError("bf.loadchunk");
  const iterator = parseInt64(argv[2]!);
  if (iterator === null) throw loadChunkBadIterator();
  const key = argv[1]!;
  const data = Buffer.from(argv[3]!, "latin1");
  const chain = getChain(x, key);
  if (chain === undefined) {
    if (iterator !== headerIterator) throw notFound();
    x.db.set(key, decodeHeader(data));
  } else {
    loadChunk(chain, iterator, data);
    x.db.modified(key);
  }
  x.reply.simple("OK");
}

// ---- declarations -----------------------------------------------------------------------------

const key: readonly [number, number, number] = [1, 1, 1];
const write = ["write", "denyoom"] as const;
const read = ["readonly", "fast"] as const;

const bf = (name: string, flags: CommandSpec["flags"], summary: string, run: (x: Exec, argv: string[]) => void): CommandSpec => ({
  name,
  arity: -1,
  flags,
  group: "module",
  summary,
  keys: key,
  run,
});

export const bloomCommands: readonly CommandSpec[] = [
  bf("bf.reserve", write, "Creates an empty Bloom filter with an error rate and capacity.", reserve),
  bf("bf.add", write, "Adds an item to a Bloom filter, creating it if needed.", add),
  bf("bf.madd", write, "Adds items to a Bloom filter, creating it if needed.", madd),
  bf("bf.insert", write, "Adds items to a Bloom filter, creating it with the given options if needed.", insert),
  bf("bf.exists", read, "Whether an item may be in a Bloom filter.", exists),
  bf("bf.mexists", read, "Whether each item may be in a Bloom filter.", mexists),
  bf("bf.card", read, "Returns the number of items added to a Bloom filter.", card),
  bf("bf.info", read, "Returns a Bloom filter's capacity, size, sub-filters, items and expansion.", info),
  bf("bf.debug", read, "Describes each sub-filter of a Bloom filter.", debug),
  bf("bf.scandump", ["readonly"], "Returns the next chunk of a Bloom filter's dump, from the iterator given.", scandump),
  bf("bf.loadchunk", write, "Restores a Bloom filter from a chunk BF.SCANDUMP returned.", loadchunk),
];
