/**
 * The schema registry over HTTP (spec: Schema registry). A subject is covered by the grants of
 * the topic it is named after (`orders-value` by those on `orders`): registering needs admin on
 * it, reading needs read. Bodies are in docs/broker.md ("Schema registry").
 */
import type { RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { badRequest, objectFields, textField } from "../requests/fields.ts";
import { type SchemaType, schemaTypes, subjectTopic } from "../schemas/registry.ts";
import { principalOf } from "./principal.ts";

function schemaId(text: string): number {
  const id = /^[1-9]\d{0,14}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw badRequest(`schema id must be a positive integer, not ${JSON.stringify(text)}`);
  return id;
}

export function schemaRoutes(broker: Broker): RouteTable {
  const { pipeline, schemas } = broker;
  /** Runs `work` for any authenticated principal; grants on the subject's topic are checked inside, once it is known. */
  const authenticated = <T>(req: Request, work: (principal: ReturnType<typeof principalOf>) => T | Promise<T>) => {
    const principal = principalOf(pipeline, req);
    return pipeline.run(principal, { action: "read", topic: null, run: () => work(principal) });
  };
  return {
    "/schemas": {
      async POST(ctx) {
        const { id, created } = await authenticated(ctx.req, async (principal) => {
          const fields = objectFields(await ctx.json(), ["subject", "type", "schema"], "the request body");
          for (const name of ["subject", "type", "schema"]) if (fields[name] === undefined) throw badRequest(`'${name}' is required`);
          const subject = textField(fields.subject, "subject");
          pipeline.authorize(principal, "admin", subjectTopic(subject));
          const type = textField(fields.type, "type");
          if (!(schemaTypes as readonly string[]).includes(type)) {
            throw badRequest(`'type' ${JSON.stringify(type)} is not supported; the registry checks ${schemaTypes.join(", ")} schemas`);
          }
          return schemas.register(subject, type as SchemaType, textField(fields.schema, "schema"));
        });
        return json({ id }, created ? 201 : 200);
      },
      async GET({ req }) {
        return json({
          schemas: await authenticated(req, (principal) => schemas.list().filter((s) => pipeline.canRead(principal, subjectTopic(s.subject)))),
        });
      },
    },
    "/schemas/:id": {
      async GET({ req, params }) {
        return json(
          await authenticated(req, (principal) => {
            const found = schemas.get(schemaId(params.id!));
            pipeline.authorize(principal, "read", subjectTopic(found.subject));
            return found;
          }),
        );
      },
    },
    "/subjects/:subject/versions/latest": {
      async GET({ req, params }) {
        return json(
          await authenticated(req, (principal) => {
            const subject = params.subject!;
            pipeline.authorize(principal, "read", subjectTopic(subject));
            return schemas.latest(subject);
          }),
        );
      },
    },
  };
}
