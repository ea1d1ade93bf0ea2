/**
 * Sorted sets: ZRANGE … WITHSCORES and ZADD under /zset/{key}. Members come back in the shape
 * PUT takes them, `{"member", "score"}` objects, so a client reads what it wrote.
 */
import { bytesField, numberField, objectListField } from "../body-fields.ts";
import type { Json } from "../json-reply.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

/** RESP3's [[member, score], …] as [{member, score}, …]. */
function scoredMembers(value: Json): Json {
  return (value as [Json, Json][]).map(([member, score]) => ({ member, score }));
}

export const zsetRoutes: RestRoutes = {
  "/zset/:key": {
    GET: (r) => runAndAnswer(r, ["ZRANGE", r.params.key!, r.query("start", "0"), r.query("stop", "-1"), "WITHSCORES"], scoredMembers),
    async PUT(r) {
      const body = await r.body(["members"]);
      const argv = ["ZADD", r.params.key!];
      objectListField(body, "members", ["score", "member"]).forEach((item, i) => {
        argv.push(numberField(item, "score", `members[${i}].score`, true), bytesField(item, "member", `members[${i}].member`));
      });
      return runAndAnswer(r, argv);
    },
  },
};
