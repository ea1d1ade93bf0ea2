/**
 * Bloom filters: BF.RESERVE, BF.ADD, BF.EXISTS and BF.INFO under /bf.
 */
import { SvcError } from "../../../core/errors.ts";
import { bytesField, integerField, numberField } from "../body-fields.ts";
import type { Outcome } from "../command-runner.ts";
import { type RestRoutes, result, runAndAnswer, outcomeValue } from "../request.ts";

/** RedisBloom's answers for a filter that is missing or already there, as 404 and 409. */
function bloomValue(outcome: Outcome) {
  if (!outcome.ok && outcome.error === "ERR not found") throw new SvcError("not_found", "ERR not found");
  if (!outcome.ok && outcome.error === "ERR item exists") throw new SvcError("conflict", "ERR item exists");
  return outcomeValue(outcome);
}

export const bloomRoutes: RestRoutes = {
  "/bf/reserve/:key": {
    async POST(r) {
      const body = await r.body(["error_rate", "capacity"]);
      const argv = ["BF.RESERVE", r.params.key!, numberField(body, "error_rate"), integerField(body, "capacity")];
      return result(bloomValue(await r.run(argv)));
    },
  },
  "/bf/add/:key": {
    async POST(r) {
      const body = await r.body(["item"]);
      return runAndAnswer(r, ["BF.ADD", r.params.key!, bytesField(body, "item")]);
    },
  },
  "/bf/exists/:key/:item": { GET: (r) => runAndAnswer(r, ["BF.EXISTS", r.params.key!, r.params.item!]) },
  // RESP3's map: {"Capacity": …, "Size": …, "Number of filters": …, "Number of items inserted": …, "Expansion rate": …}.
  "/bf/info/:key": { GET: async (r) => result(bloomValue(await r.run(["BF.INFO", r.params.key!]))) },
};
