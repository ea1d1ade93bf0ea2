/**
 * RedisBloom's error replies for the BF.* commands, word for word (RedisBloom 2.8, whose texts
 * clients and their tests match on). Some carry no "ERR" code word: RedisBloom sends them as they
 * are, and Redis adds no prefix to a module's error that it did not write itself.
 */
import { KvError } from "../../text/errors.ts";

const error = (message: string) => () => new KvError(message);

// BF.RESERVE
export const badErrorRate = error("ERR bad error rate");
/** The trailing space is RedisBloom's. */
export const errorRateRange = error("ERR (0 < error rate range < 1) ");
export const badCapacity = error("ERR bad capacity");
export const capacityRange = error("ERR (capacity should be larger than 0)");
export const noExpansion = error("ERR no expansion");
export const badExpansion = error("ERR bad expansion");
export const expansionRange = error("ERR expansion should be greater or equal to 1");
export const nonScalingCannotExpand = error("Nonscaling filters cannot expand");
export const itemExists = error("ERR item exists");
/** Also our answer for a sub-filter larger than filterBytesMax, where RedisBloom's allocation fails. */
export const couldNotCreate = error("ERR could not create filter");

// BF.INSERT
export const insertBadErrorRate = error("Bad error rate");
export const insertBadCapacity = error("Bad capacity");
export const insertBadExpansion = error("Bad expansion");
export const unknownArgument = error("Unknown argument received");
export const badArgument = error("Bad argument received");

// adding, BF.INFO
export const nonScalingFull = "ERR non scaling filter is full";
export const notFound = error("ERR not found");
export const invalidInformation = error("Invalid information value");

// BF.SCANDUMP, BF.LOADCHUNK: RedisBloom words the same complaint two ways, with and without "ERR".
export const scanDumpBadIterator = error("Second argument must be numeric");
export const loadChunkBadIterator = error("ERR Second argument must be numeric");
export const badData = error("ERR received bad data");
export const noLinkFound = error("ERR invalid offset - no link found");
export const chunkTooBig = error("ERR invalid chunk - Too big for current filter");
