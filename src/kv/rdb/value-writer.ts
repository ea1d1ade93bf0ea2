/**
 * Writing one value in RDB format, type byte first, for DUMP. Only the plain encodings: a string
 * as its bytes, a list, a set, a hash as its elements, a sorted set as members with binary scores
 * — every Redis from 5.0 on reads these (and converts them to its compact forms as it loads), so
 * a DUMP from svc RESTOREs there as well as here. A stream has only its compact form, Redis 7.0's
 * (rdb/stream-rdb.ts). Bloom filters, a module type in Redis, have no
 * such form: DUMP refuses them (BF.SCANDUMP moves them).
 */
import type { Value } from "../types/value.ts";
import { BloomChain } from "../types/bloom/chain.ts";
import { Stream } from "../types/stream/stream.ts";
import { writeStream } from "./stream-rdb.ts";
import { MutableString } from "../types/string/bytes.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { ZSet } from "../types/zset/zset.ts";
import { rdbType } from "./value-types.ts";
import { RdbOutput } from "./rdb-output.ts";

/** The value in RDB format, or null for a value that has none (a Bloom filter). */
export function writeValue(value: Value): Uint8Array | null {
  const out = new RdbOutput();
  if (typeof value === "string" || value instanceof MutableString) {
    out.byte(rdbType.string);
    out.string(typeof value === "string" ? value : value.toString());
  } else if (value instanceof List) {
    out.byte(rdbType.list);
    out.lengthOf(value.size);
    for (const item of value) out.string(item);
  } else if (value instanceof MemberSet) {
    out.byte(rdbType.set);
    out.lengthOf(value.size);
    for (const member of value.values()) out.string(member);
  } else if (value instanceof FieldMap) {
    out.byte(rdbType.hash);
    out.lengthOf(value.size);
    for (const [field, v] of value.entries()) {
      out.string(field);
      out.string(v);
    }
  } else if (value instanceof ZSet) {
    out.byte(rdbType.zset);
    out.lengthOf(value.size);
    for (const { member, score } of value.entries()) {
      out.string(member);
      out.binaryDouble(score);
    }
  } else if (value instanceof Stream) writeStream(out, value);
  else if (value instanceof BloomChain) return null;
  return out.take();
}
