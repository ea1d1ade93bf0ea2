/**
 * Hashes: HGETALL, HGET, HSET and HDEL under /hash/{key}.
 */
import { SvcError } from "../../../core/errors.ts";
import { type Body, bytesField } from "../body-fields.ts";
import { textToBytes } from "../bytes-json.ts";
import { notFound, type RestRoutes, result, runAndAnswer, outcomeValue } from "../request.ts";

/** HSET's field/value arguments from the `fields` object (field names are UTF-8 text). */
function fieldArguments(body: Body): string[] {
  const fields = body.fields;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    throw new SvcError("bad_request", "'fields' must be an object of field names to string values");
  }
  const names = Object.keys(fields);
  if (names.length === 0) throw new SvcError("bad_request", "'fields' must hold at least one field");
  const argv: string[] = [];
  for (const name of names) {
    if (!name.isWellFormed()) throw new SvcError("bad_request", "a field name in 'fields' is not valid Unicode (it holds a lone surrogate)");
    argv.push(textToBytes(name), bytesField(fields as Body, name, `fields.${name}`));
  }
  return argv;
}

export const hashRoutes: RestRoutes = {
  "/hash/:key": {
    // The spec asks for HGETALL's flat field, value, … array: RESP2's shape.
    GET: (r) => runAndAnswer(r, ["HGETALL", r.params.key!], undefined, { protocol: 2 }),
    async PUT(r) {
      const body = await r.body(["fields"]);
      return runAndAnswer(r, ["HSET", r.params.key!, ...fieldArguments(body)]);
    },
  },
  "/hash/:key/:field": {
    async GET(r) {
      const value = outcomeValue(await r.run(["HGET", r.params.key!, r.params.field!]));
      return value === null ? notFound("field not found") : result(value);
    },
    DELETE: (r) => runAndAnswer(r, ["HDEL", r.params.key!, r.params.field!]),
  },
};
