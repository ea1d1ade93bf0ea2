/**
 * BF.RESERVE's and BF.INSERT's arguments, read the way RedisBloom 2.8 reads them — including its
 * quirks, because clients see them: BF.RESERVE finds NONSCALING and EXPANSION anywhere in argv
 * (the key too) and ignores words it does not know, and BF.INSERT tells its options apart by
 * their first letter (ERROR and EXPANSION by the second, NOCREATE and NONSCALING by the third).
 * Every check happens before any key is touched, so a refused command changes nothing.
 */
import { parseFloatArg, parseInt64 } from "../../text/args.ts";
import { arityError } from "../../text/errors.ts";
import {
  badArgument,
  badCapacity,
  badErrorRate,
  badExpansion,
  capacityRange,
  errorRateRange,
  expansionRange,
  insertBadCapacity,
  insertBadErrorRate,
  insertBadExpansion,
  noExpansion,
  nonScalingCannotExpand,
  unknownArgument,
} from "./bloom-errors.ts";

/** How a chain is created: what BF.RESERVE and BF.INSERT ask for, or the defaults. */
export interface ChainOptions {
  capacity: bigint;
  errorRate: number;
  /** RedisBloom keeps the growth factor in a C unsigned: an EXPANSION of 2^32 + 2 is 2. */
  expansion: number;
  scaling: boolean;
}

/** What a key created by BF.ADD, BF.MADD or a bare BF.INSERT gets: RedisBloom's defaults. */
export const defaultChainOptions: Readonly<ChainOptions> = { capacity: 100n, errorRate: 0.01, expansion: 2, scaling: true };

/** BF.RESERVE's argument count limits, counting the command name. */
const reserveArgsMin = 4;
const reserveArgsMax = 7;
/** BF.INSERT needs at least key, one option word and one more argument. */
const insertArgsMin = 4;

/** A double as RedisModule_StringToDouble reads it (Redis's string2d), or null. */
function toDouble(text: string): number | null {
  try {
    return parseFloatArg(text);
  } catch {
    return null;
  }
}

const toUint32 = (n: bigint) => Number(BigInt.asUintN(32, n));

/** Position of the first argument equal to `word` ignoring case, or -1 (RedisBloom's RMUtil_ArgIndex). */
function argIndex(argv: readonly string[], word: string): number {
  return argv.findIndex((arg) => arg.length === word.length && arg.toUpperCase() === word);
}

/** BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING], checked in RedisBloom's order. */
export function parseReserve(argv: readonly string[]): ChainOptions {
  if (argv.length < reserveArgsMin || argv.length > reserveArgsMax) throw arityError("bf.reserve");
  const errorRate = toDouble(argv[2]!);
  if (errorRate === null) throw badErrorRate();
  if (!(errorRate > 0 && errorRate < 1)) throw errorRateRange();
  const capacity = parseInt64(argv[3]!);
  if (capacity === null) throw badCapacity();
  if (capacity <= 0n) throw capacityRange();
  const scaling = argIndex(argv, "NONSCALING") === -1;
  const at = argIndex(argv, "EXPANSION");
  if (at + 1 === argv.length) throw noExpansion();
  let expansion = defaultChainOptions.expansion;
  if (at !== -1) {
    if (!scaling) throw nonScalingCannotExpand();
    const n = parseInt64(argv[at + 1]!);
    if (n === null) throw badExpansion();
    if (n < 1n) throw expansionRange();
    expansion = toUint32(n);
  }
  return { capacity, errorRate, expansion, scaling };
}

export interface InsertArgs {
  options: ChainOptions;
  /** False with NOCREATE: a missing key is an error instead of a new chain. */
  create: boolean;
  /** Index in argv of the first item. */
  itemsAt: number;
}

/** The lower-cased ASCII letter at `index` of `word`, "" past its end (C reads the terminating NUL there). */
function letterAt(word: string, index: number): string {
  const code = word.charCodeAt(index);
  if (Number.isNaN(code)) return "";
  return String.fromCharCode(code >= 65 && code <= 90 ? code + 32 : code);
}

/** BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item... */
export function parseInsert(argv: readonly string[]): InsertArgs {
  if (argv.length < insertArgsMin) throw arityError("bf.insert");
  let { capacity, errorRate } = defaultChainOptions;
  let expansion = BigInt(defaultChainOptions.expansion);
  let scaling = true;
  let create = true;
  let itemsAt = -1;
  let at = 2;
  // A value-taking option must have its value: missing, it is an arity error, as in RedisBloom.
  const nextValue = () => {
    if (++at === argv.length) throw arityError("bf.insert");
    return argv[at++]!;
  };
  while (at < argv.length && itemsAt < 0) {
    const word = argv[at]!;
    switch (letterAt(word, 0)) {
      case "i":
        itemsAt = ++at;
        break;
      case "e":
        if (letterAt(word, 1) === "r") errorRate = toDouble(nextValue()) ?? throwError(insertBadErrorRate);
        else expansion = parseInt64(nextValue()) ?? throwError(insertBadExpansion);
        break;
      case "c":
        capacity = parseInt64(nextValue()) ?? throwError(insertBadCapacity);
        break;
      case "n":
        if (letterAt(word, 2) === "c") create = false;
        else scaling = false;
        at++;
        break;
      default:
        throw unknownArgument();
    }
  }
  if (itemsAt < 0 || itemsAt === argv.length) throw arityError("bf.insert");
  if (!(errorRate > 0 && errorRate < 1) || capacity < 1n || expansion < 1n) throw badArgument();
  return { options: { capacity, errorRate, expansion: toUint32(expansion), scaling }, create, itemsAt };
}

function throwError(error: () => Error): never {
  throw error();
}
