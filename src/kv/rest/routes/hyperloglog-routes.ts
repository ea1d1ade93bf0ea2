/**
 * HyperLogLog: PFADD, PFCOUNT and PFMERGE.
 */
import { bytesListField } from "../body-fields.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

export const hyperloglogRoutes: RestRoutes = {
  "/pfadd/:key": {
    async POST(r) {
      // No elements is allowed, as in PFADD: it creates an empty HyperLogLog.
      const body = await r.body(["elements"]);
      return runAndAnswer(r, ["PFADD", r.params.key!, ...bytesListField(body, "elements", { nonEmpty: false })]);
    },
  },
  "/pfcount/:key": { GET: (r) => runAndAnswer(r, ["PFCOUNT", r.params.key!]) },
  "/pfmerge/:dest": {
    async POST(r) {
      const body = await r.body(["sources"]);
      return runAndAnswer(r, ["PFMERGE", r.params.dest!, ...bytesListField(body, "sources", { nonEmpty: false })]);
    },
  },
};
