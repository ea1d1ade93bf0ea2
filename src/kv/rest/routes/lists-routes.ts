/**
 * Lists: LRANGE, LPUSH/RPUSH and LPOP/RPOP under /list/{key}.
 */
import { bytesListField } from "../body-fields.ts";
import type { RestRequest, RestRoutes } from "../request.ts";
import { runAndAnswer } from "../request.ts";

async function push(r: RestRequest, command: "LPUSH" | "RPUSH"): Promise<Response> {
  const body = await r.body(["values"]);
  return runAndAnswer(r, [command, r.params.key!, ...bytesListField(body, "values", { nonEmpty: true })]);
}

export const listRoutes: RestRoutes = {
  "/list/:key": {
    // The range goes to LRANGE as sent, so a bad one gets LRANGE's own error.
    GET: (r) => runAndAnswer(r, ["LRANGE", r.params.key!, r.query("start", "0"), r.query("stop", "-1")]),
  },
  "/list/:key/lpush": { POST: (r) => push(r, "LPUSH") },
  "/list/:key/rpush": { POST: (r) => push(r, "RPUSH") },
  // A pop of an empty or missing list answers {"result": null}, as LPOP does.
  "/list/:key/lpop": { POST: (r) => runAndAnswer(r, ["LPOP", r.params.key!]) },
  "/list/:key/rpop": { POST: (r) => runAndAnswer(r, ["RPOP", r.params.key!]) },
};
