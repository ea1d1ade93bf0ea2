/**
 * Bitmaps: SETBIT, GETBIT and BITCOUNT under /bitmap/{key}.
 */
import { integerField } from "../body-fields.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

export const bitmapRoutes: RestRoutes = {
  "/bitmap/:key/setbit": {
    async POST(r) {
      const body = await r.body(["offset", "value"]);
      // Range checks (a negative offset, a value other than 0 or 1) are SETBIT's, with its errors.
      return runAndAnswer(r, ["SETBIT", r.params.key!, integerField(body, "offset"), integerField(body, "value")]);
    },
  },
  "/bitmap/:key/getbit/:offset": { GET: (r) => runAndAnswer(r, ["GETBIT", r.params.key!, r.params.offset!]) },
  "/bitmap/:key/bitcount": {
    GET(r) {
      const start = r.query("start");
      const end = r.query("end");
      // One bound without the other reaches BITCOUNT as sent, which answers "syntax error".
      const range = [start, end].filter((bound) => bound !== undefined) as string[];
      return runAndAnswer(r, ["BITCOUNT", r.params.key!, ...range]);
    },
  },
};
