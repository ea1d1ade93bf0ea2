/**
 * A key's value, whichever type it is, and the type's name as TYPE answers it. A value's type
 * follows from its representation:
 *
 *   string or MutableString → string   List → list   FieldMap → hash   MemberSet → set   ZSet → zset
 *   Stream → stream   BloomChain → MBbloom--
 */
import type { BloomChain } from "./bloom/chain.ts";
import type { FieldMap } from "./hash/field-map.ts";
import type { List } from "./list/items.ts";
import type { MemberSet } from "./set/member-set.ts";
import type { MutableString } from "./string/bytes.ts";
import type { Stream } from "./stream/stream.ts";
import type { ZSet } from "./zset/zset.ts";

export type Value = string | MutableString | List | FieldMap | MemberSet | ZSet | BloomChain | Stream;
/** "MBbloom--" is the module type name RedisBloom registers for its Bloom filters. */
export type TypeName = "string" | "list" | "hash" | "set" | "zset" | "stream" | "MBbloom--";

export function typeOf(value: Value): TypeName {
  return typeof value === "string" ? "string" : value.kind;
}
