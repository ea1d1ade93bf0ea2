/**
 * Strings: GET, SET (with EX/PX) and DEL of one key under /kv/{key}.
 */
import { bytesField, integerField } from "../body-fields.ts";
import { notFound, type RestRoutes, result, runAndAnswer, outcomeValue } from "../request.ts";

export const stringRoutes: RestRoutes = {
  "/kv/:key": {
    async GET(r) {
      const value = outcomeValue(await r.run(["GET", r.params.key!]));
      return value === null ? notFound("key not found") : result(value);
    },
    async PUT(r) {
      const body = await r.body(["value", "ex", "px"]);
      const argv = ["SET", r.params.key!, bytesField(body, "value")];
      const ex = integerField(body, "ex", true);
      const px = integerField(body, "px", true);
      // Both at once reach SET as sent, which refuses them with Redis's "syntax error".
      if (ex !== undefined) argv.push("EX", ex);
      if (px !== undefined) argv.push("PX", px);
      return runAndAnswer(r, argv);
    },
    DELETE: (r) => runAndAnswer(r, ["DEL", r.params.key!]),
  },
};
