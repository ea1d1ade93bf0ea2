/**
 * Sets: SMEMBERS, SADD and SREM under /set/{key}.
 */
import { bytesListField } from "../body-fields.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

export const setRoutes: RestRoutes = {
  "/set/:key": {
    GET: (r) => runAndAnswer(r, ["SMEMBERS", r.params.key!]),
    async PUT(r) {
      const body = await r.body(["members"]);
      return runAndAnswer(r, ["SADD", r.params.key!, ...bytesListField(body, "members", { nonEmpty: true })]);
    },
  },
  "/set/:key/:member": {
    DELETE: (r) => runAndAnswer(r, ["SREM", r.params.key!, r.params.member!]),
  },
};
