/**
 * /api/v1/{object} and /api/v1/{object}/{id}: list, read, create, change. Sharing decides first
 * (a record one cannot see is 404, one that is read-only is 403 on PATCH); then the rules engine
 * saves, inside the request's one transaction.
 */
import { SvcError } from "../../core/errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext, RouteTable } from "../../http/route.ts";
import type { User } from "../auth/users.ts";
import { isCrmObject } from "../objects/fields.ts";
import { type ListLimits, RecordStore } from "../records/record-store.ts";
import { saveRecord } from "../records/save-record.ts";
import type { CrmObject, FieldError, RecordData } from "../rules/record.ts";
import type { Db } from "../store/db.ts";
import { authed, objectBody, pathId, settingsSeenBy } from "./auth.ts";
import { parseListQuery } from "./list-query.ts";

function objectOf(ctx: RequestContext): CrmObject {
  const name = ctx.params.object ?? "";
  if (!isCrmObject(name)) throw new SvcError("not_found", `no object type ${JSON.stringify(name)}; use accounts, contacts, leads, opportunities or cases`);
  return name;
}

const notFound = (object: CrmObject, id: number) => new SvcError("not_found", `no ${object} record ${id}`);

/** Fields only the store sets: a client sending one gets a 422 detail on it. */
const readOnlyFields = ["id", "created_at", "updated_at"];

async function readOnlyErrors(store: RecordStore, object: CrmObject, body: RecordData, isCreate: boolean): Promise<void> {
  const errors: FieldError[] = readOnlyFields.filter((f) => f in body).map((field) => ({ field, message: "read-only field" }));
  if (errors.length === 0) return;
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !readOnlyFields.includes(k)));
  errors.push(...(await store.checkFields(object, rest, isCreate)));
  throw new SvcError("invalid", "invalid record", { details: errors });
}

/** Standard defaults (picklists' first values, the owner) under what the client sent. */
async function withDefaults(store: RecordStore, object: CrmObject, body: RecordData, user: User): Promise<RecordData> {
  const schema = await store.schema(object);
  const defaults: RecordData = { owner_id: user.id };
  for (const field of schema.fields) if (field.defaultValue !== undefined) defaults[field.name] = field.defaultValue;
  return { ...defaults, ...body };
}

/** `limits`: how far a list counts and looks (--list-count-max, --search-newest-rows). */
export function recordRoutes(db: Db, limits: ListLimits): RouteTable {
  return {
    "/api/v1/:object": {
      GET: authed(db, async (ctx, user) => {
        const object = objectOf(ctx);
        const query = parseListQuery(ctx.url);
        return json(
          await new RecordStore(db, user, { settings: db.settings, searchReads: db.searchReads, seen: settingsSeenBy(ctx) }).list(object, query, limits),
        );
      }),
      POST: authed(db, async (ctx, user) => {
        const object = objectOf(ctx);
        const body = await objectBody(ctx);
        const record = await db.write(async (tx) => {
          const store = new RecordStore(tx, user, { settings: db.settings });
          await readOnlyErrors(store, object, body, true);
          const stored = await saveRecord(store, { object, old: null, changes: await withDefaults(store, object, body, user), depth: 0 });
          return store.view(object, stored);
        });
        return json(record, 201, { location: `/api/v1/${object}/${record.id}` });
      }),
    },
    "/api/v1/:object/:id": {
      GET: authed(db, async (ctx, user) => {
        const object = objectOf(ctx);
        const id = pathId(ctx, `${object} record`);
        const store = new RecordStore(db, user, { settings: db.settings, seen: settingsSeenBy(ctx) });
        const found = await store.readShared(object, id);
        if (found === null) throw notFound(object, id);
        return json(await store.view(object, found.record));
      }),
      PATCH: authed(db, async (ctx, user) => {
        const object = objectOf(ctx);
        const id = pathId(ctx, `${object} record`);
        const body = await objectBody(ctx);
        const record = await db.write(async (tx) => {
          const store = new RecordStore(tx, user, { settings: db.settings });
          const found = await store.readShared(object, id);
          if (found === null) throw notFound(object, id);
          if (!found.canEdit) throw new SvcError("forbidden", `you may read ${object} record ${id} but not change it`);
          await readOnlyErrors(store, object, body, false);
          const stored = await saveRecord(store, { object, old: found.record, changes: body, depth: 0 });
          return store.view(object, stored);
        });
        return json(record);
      }),
    },
  };
}
