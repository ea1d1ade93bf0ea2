/**
 * One request's view of the records: who asks (sharing, admin-only fields), on which connection
 * (the request's transaction, or plain reads), with schemas and sharing settings read once per
 * request. It is also the rules engine's SaveHost (rules/contract.ts): the engine validates and
 * persists through it, inside the same transaction.
 */
import { loadRoles, RoleTree } from "../auth/roles.ts";
import type { User } from "../auth/users.ts";
import { loadSchema, type ObjectSchema } from "../objects/schema.ts";
import { checkValues, ownerField, rowToRecord, searchText, toColumn } from "../objects/values.ts";
import type { CrmObject, FieldError, RecordData, RuleSet, SaveHost } from "../rules/contract.ts";
import { type AccessLevel, accessPredicate, type SharingContext } from "../sharing/access.ts";
import { loadDefaultAccess, loadSharingRules } from "../sharing/sharing-rules.ts";
import { type Queryable, SqlParams } from "../store/db.ts";
import { loadRuleSet } from "./rule-definitions.ts";
import { searchPredicate } from "./search.ts";

export interface ListQuery {
  terms: string[];
  updatedSince: string | null;
  page: number;
  per: number;
}

export interface ListResult {
  data: RecordData[];
  page: number;
  per: number;
  total: number;
}

/** accessPredicate, or an admin's (no sharing settings): every row. */
const access = (sharing: SharingContext | null, schema: ObjectSchema, level: AccessLevel, p: SqlParams) =>
  sharing === null ? "1 = 1" : accessPredicate(sharing, schema, level, p);

/** Fields the store writes itself, whatever `values` says. */
const systemManaged = new Set(["id", "created_at", "updated_at"]);

export class RecordStore implements SaveHost {
  readonly #schemas = new Map<CrmObject, Promise<ObjectSchema>>();
  readonly #sharing = new Map<CrmObject, Promise<SharingContext>>();
  #roles: Promise<RoleTree> | undefined;

  constructor(
    readonly q: Queryable,
    readonly user: User,
  ) {}

  schema(object: CrmObject): Promise<ObjectSchema> {
    let schema = this.#schemas.get(object);
    if (schema === undefined) this.#schemas.set(object, (schema = loadSchema(this.q, object)));
    return schema;
  }

  roles(): Promise<RoleTree> {
    return (this.#roles ??= loadRoles(this.q).then((roles) => new RoleTree(roles)));
  }

  /**
   * The object's sharing settings, read once per store; null for an admin, who has every access
   * whatever they say (accessPredicate), so they are not read.
   */
  sharing(object: CrmObject): Promise<SharingContext | null> {
    if (this.user.isAdmin) return Promise.resolve(null);
    let sharing = this.#sharing.get(object);
    if (sharing === undefined) this.#sharing.set(object, (sharing = this.#loadSharing(object)));
    return sharing;
  }

  async #loadSharing(object: CrmObject): Promise<SharingContext> {
    const [roles, defaults, rules] = await Promise.all([this.roles(), loadDefaultAccess(this.q), loadSharingRules(this.q, object)]);
    return { user: this.user, roles, defaultAccess: defaults[object], rules };
  }

  /** A stored record as this user may see it: admin-only fields hidden from non-admins. */
  async view(object: CrmObject, record: RecordData): Promise<RecordData> {
    if (this.user.isAdmin) return record;
    const schema = await this.schema(object);
    return Object.fromEntries(Object.entries(record).filter(([name]) => schema.byName.get(name)?.adminOnly !== true));
  }

  async list(object: CrmObject, query: ListQuery): Promise<ListResult> {
    const [schema, sharing] = await Promise.all([this.schema(object), this.sharing(object)]);
    const p = new SqlParams();
    const where = [access(sharing, schema, "read", p)];
    const search = searchPredicate(this.q.dialect, object, query.terms, p);
    if (search !== null) where.push(search);
    if (query.updatedSince !== null) where.push(`updated_at >= ${p.add(query.updatedSince)}`);
    const condition = where.join(" AND ");
    const conditionParams = [...p.values];
    const count = async () => Number((await this.q.get<{ n: number }>(`SELECT count(*) AS n FROM ${object} WHERE ${condition}`, conditionParams))!.n);
    const limit = p.add(query.per);
    const offset = p.add((query.page - 1) * query.per);
    const page = `FROM ${object} WHERE ${condition} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
    let rows: Record<string, unknown>[];
    let total: number;
    if (search === null || this.q.dialect === "postgres") {
      // Without a search the page walks the newest-first index and stops after `per` rows, while
      // the count reads every visible row: two queries, each with its own best plan. PostgreSQL
      // too with a search: given a window count it walks the date index and tests every row
      // (4-8x slower at 100k rows, bench/crm.ts).
      total = await count();
      rows = await this.q.all(`SELECT ${schema.columns} ${page}`, p.values);
    } else {
      // SQLite reads every match of a search anyway (the trigram index knows no date order), so
      // the count rides along as a window over the same matches instead of searching twice.
      rows = await this.q.all(`SELECT ${schema.columns}, count(*) OVER () AS total_ ${page}`, p.values);
      // A page past the last match has no row to carry the count.
      total = rows.length > 0 ? Number(rows[0]!.total_) : await count();
    }
    const data = rows.map((row) => rowToRecord(schema, row, this.user.isAdmin));
    return { data, page: query.page, per: query.per, total };
  }

  /** A record this user can see (every field) and whether they may change it; null when they cannot see it. */
  async readShared(object: CrmObject, id: number): Promise<{ record: RecordData; canEdit: boolean } | null> {
    const [schema, sharing] = await Promise.all([this.schema(object), this.sharing(object)]);
    const p = new SqlParams();
    const idParam = p.add(id);
    const canRead = access(sharing, schema, "read", p);
    const canEdit = access(sharing, schema, "edit", p);
    const row = await this.q.get(
      `SELECT ${schema.columns}, CASE WHEN ${canEdit} THEN 1 ELSE 0 END AS can_edit_ FROM ${object} WHERE id = ${idParam} AND ${canRead}`,
      p.values,
    );
    if (row === undefined) return null;
    return { record: rowToRecord(schema, row, true), canEdit: Number(row.can_edit_) === 1 };
  }

  // ---- SaveHost ------------------------------------------------------------------------------

  rulesFor(object: CrmObject): Promise<RuleSet> {
    return loadRuleSet(this.q, object);
  }

  async checkFields(object: CrmObject, values: RecordData, isCreate: boolean, automated?: ReadonlySet<string>): Promise<FieldError[]> {
    const schema = await this.schema(object);
    const errors = checkValues(schema, values, { isAdmin: this.user.isAdmin, isCreate, automated });
    const flagged = new Set(errors.map((e) => e.field));
    for (const field of schema.fields) {
      const value = values[field.name];
      if (field.type !== "reference" || flagged.has(field.name) || value === null || value === undefined) continue;
      const problem = await this.#referenceProblem(field.references!, value as number, automated?.has(field.name) === true);
      if (problem !== null) errors.push({ field: field.name, message: problem });
    }
    return errors;
  }

  /**
   * A reference must name a record the user can see (as Salesforce requires read access to a
   * lookup's target); automation runs in system context and needs only that it exists.
   */
  async #referenceProblem(target: CrmObject | "users", id: number, system: boolean): Promise<string | null> {
    if (target === "users") {
      // The acting user exists: they were read from the users table, whose rows are never deleted.
      if (id === this.user.id) return null;
      const user = await this.q.get("SELECT id FROM users WHERE id = $1", [id]);
      return user === undefined ? `no user ${id}` : null;
    }
    const found = system ? await this.read(target, id) : await this.readShared(target, id);
    return found === null ? `no ${target} record ${id} that you can see` : null;
  }

  async persist(object: CrmObject, old: RecordData | null, values: RecordData): Promise<RecordData> {
    const schema = await this.schema(object);
    const now = new Date().toISOString();
    const columns: string[] = [];
    const params = new SqlParams();
    const placeholders: string[] = [];
    for (const [name, value] of Object.entries(values)) {
      const field = schema.byName.get(name);
      if (field === undefined || systemManaged.has(name)) continue;
      // A create's null owner is the caller (checkValues refuses it on an update), added below.
      if (old === null && name === ownerField && value === null) continue;
      columns.push(name);
      placeholders.push(params.add(toColumn(field, value)));
    }
    if (old === null) {
      // Defaults for a create that left them out, e.g. a case a flow creates without a status.
      for (const field of schema.fields) {
        if (field.defaultValue === undefined || field.name in values) continue;
        columns.push(field.name);
        placeholders.push(params.add(toColumn(field, field.defaultValue)));
      }
    }
    const merged = { ...old, ...values };
    let row: Record<string, unknown> | undefined;
    if (old === null) {
      if (!(ownerField in values) || values.owner_id === null) {
        columns.push(ownerField);
        placeholders.push(params.add(this.user.id));
      }
      columns.push("created_at", "updated_at", "search_text");
      placeholders.push(params.add(now), params.add(now), params.add(searchText(schema, merged)));
      row = await this.q.get(`INSERT INTO ${object} (${columns.join(", ")}) VALUES (${placeholders.join(", ")}) RETURNING ${schema.columns}`, params.values);
    } else {
      columns.push("updated_at", "search_text");
      placeholders.push(params.add(now), params.add(searchText(schema, merged)));
      const sets = columns.map((c, i) => `${c} = ${placeholders[i]}`).join(", ");
      row = await this.q.get(`UPDATE ${object} SET ${sets} WHERE id = ${params.add(old.id)} RETURNING ${schema.columns}`, params.values);
    }
    return rowToRecord(schema, row!, true);
  }

  async read(object: CrmObject, id: number): Promise<RecordData | null> {
    const schema = await this.schema(object);
    const row = await this.q.get(`SELECT ${schema.columns} FROM ${object} WHERE id = $1`, [id]);
    return row === undefined ? null : rowToRecord(schema, row, true);
  }
}
