/**
 * API keys over HTTP (spec: Endpoints, Keys; all need admin on `*`): create (the secret is in
 * this answer only), list (no secrets), revoke. Bodies are in docs/broker.md ("Keys").
 */
import { topicNameLengthMax } from "../../core/limits.ts";
import type { RouteTable } from "../../http/route.ts";
import { json, noContent } from "../../http/response.ts";
import { parseGrants } from "../auth/grants.ts";
import type { NewKey } from "../auth/keys.ts";
import type { Broker } from "../broker.ts";
import { badRequest, describeJson, integerIn, objectFields, textField } from "../requests/fields.ts";
import { asGlobalAdmin } from "./principal.ts";

const keyNameLengthMax = topicNameLengthMax;

function rateField(value: unknown, where: string): number | null {
  if (value === undefined || value === null) return null;
  return integerIn(value, 1, Number.MAX_SAFE_INTEGER, where);
}

function decodeNewKey(body: unknown): NewKey {
  const fields = objectFields(body, ["name", "acls", "produce_bytes_per_sec", "consume_bytes_per_sec"], "the request body");
  if (fields.name === undefined) throw badRequest("'name' is required");
  const name = textField(fields.name, "name");
  if (name.length === 0 || name.length > keyNameLengthMax) throw badRequest(`'name' must be 1 to ${keyNameLengthMax} characters`);
  if (fields.acls === undefined) throw badRequest("'acls' is required (an empty array gives a key that can read nothing)");
  if (typeof fields.acls !== "object") throw badRequest(`'acls' must be an array, not ${describeJson(fields.acls)}`);
  return {
    name,
    acls: parseGrants(fields.acls),
    produce_bytes_per_sec: rateField(fields.produce_bytes_per_sec, "produce_bytes_per_sec"),
    consume_bytes_per_sec: rateField(fields.consume_bytes_per_sec, "consume_bytes_per_sec"),
  };
}

export function keyRoutes(broker: Broker): RouteTable {
  const { pipeline, keys } = broker;
  const asAdmin = <T>(req: Request, run: () => T | Promise<T>) => asGlobalAdmin(pipeline, req, run);
  return {
    "/admin/keys": {
      async POST(ctx) {
        const { key, secret } = await asAdmin(ctx.req, async () => keys.create(decodeNewKey(await ctx.json())));
        return json({ ...key, secret }, 201);
      },
      async GET({ req }) {
        return json({ keys: await asAdmin(req, () => keys.list()) });
      },
    },
    "/admin/keys/:key_id": {
      async DELETE({ req, params }) {
        await asAdmin(req, () => keys.revoke(params.key_id!));
        return noContent();
      },
    },
  };
}
