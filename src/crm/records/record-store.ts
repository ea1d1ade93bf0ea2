/**
 * One request's view of the records: who asks (sharing, admin-only fields), on which connection
 * (the request's transaction, or plain reads), with schemas and sharing settings read once per
 * request — and, given the store's settings cache, once per change of them (store/settings-cache.ts).
 * It is also the rules engine's SaveHost (rules/contract.ts): the engine validates and persists
 * through it, inside the same transaction.
 */
import { crmRareSearchesMax, crmSearchFirstLookShare } from "../../core/limits.ts";
import { loadRoles, RoleTree } from "../auth/roles.ts";
import { listUsers, type User } from "../auth/users.ts";
import { loadSchema, type ObjectSchema } from "../objects/schema.ts";
import { checkValues, ownerField, rowToRecord, searchText, toColumn } from "../objects/values.ts";
import type { CrmObject, FieldError, RecordData, RuleSet, SaveHost } from "../rules/contract.ts";
import { type AccessLevel, accessibleOwners, accessPredicate, type SharingContext } from "../sharing/access.ts";
import { type AccessWorld, accessIsMaterialized, accessTable, lockForRecordAccess, refreshRecordAccess } from "../sharing/access-rows.ts";
import { loadDefaultAccess, loadSharingRules } from "../sharing/sharing-rules.ts";
import { type Queryable, SqlParams } from "../store/db.ts";
import type { SettingsCache, SettingsSnapshot } from "../store/settings-cache.ts";
import { loadRuleSet } from "./rule-definitions.ts";
import { ownersMatchingRows, searchesPerOwner } from "./owner-search.ts";
import { matchingIds, postgresMatchingRows, rowMatches } from "./search.ts";

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
  /** Matches the user can see, counted up to the list's count cap. */
  total: number;
  /** False when there are more than `total`: the count stopped at its cap. */
  total_exact: boolean;
}

/** How far a list counts and looks (--list-count-max, --search-newest-rows). */
export interface ListLimits {
  /** A list's `total` counts matches up to this many, then says `total_exact: false`. */
  countMax: number;
  /** A search looks for its page among the user's this many newest records first. */
  searchNewestRows: number;
}

/** `updated_since` as conditions on a row (`column` prefixes the column: "" or an alias and a dot). */
const updatedSince = (query: ListQuery, column: string, p: SqlParams): string[] =>
  query.updatedSince === null ? [] : [`${column}updated_at >= ${p.add(query.updatedSince)}`];

/** accessPredicate, or an admin's (no sharing settings): every row. */
const access = (sharing: SharingContext | null, schema: ObjectSchema, level: AccessLevel, p: SqlParams) =>
  sharing === null ? "1 = 1" : accessPredicate(sharing, schema, level, p);

/**
 * The count of `rows` (a SELECT) up to one past `countMax` and no further, as a scalar subquery. A
 * plain list's page carries it as a column, computed once (it names no column of the page's rows):
 * one statement instead of two, at 100k leads on PostgreSQL a rep's list 1,205–1,285 → 1,380–1,430
 * req/s with four clients.
 */
const cappedCount = (rows: string, countMax: number) => `(SELECT count(*) FROM (${rows} LIMIT ${Math.trunc(countMax) + 1}) AS counted)`;

/**
 * A page's LIMIT and OFFSET. The row count is written into the statement, and so is an OFFSET of
 * 0 (the first page, most requests); a later page's OFFSET is bound, so deep pagers do not make a
 * prepared statement per page. PostgreSQL costs a generic plan's bound LIMIT or OFFSET as a tenth
 * of the rows, above what its custom plans cost, so it planned the statement again on every run:
 * ~0.1 ms of a 1.1 ms search from the newest rows at 100k contacts. With the numbers in the text
 * the generic plan costs the same and is kept. `rows` is a whole number the request checked.
 */
const pageLimit = (rows: number, skipped: number, p: SqlParams) => `LIMIT ${Math.trunc(rows)} OFFSET ${skipped === 0 ? "0" : p.add(skipped)}`;

/** Every match's count, on each row of a page chosen from all the matches. */
const windowCount = "count(*) OVER () AS total_";

/**
 * Searches (user, object, updated_since and terms) whose page was not among the user's newest
 * records when last asked, by the store they were asked of, with the fewest matches (the page's
 * and one past it) the walk there failed to find: a later page needing as many reads its matches
 * at once rather than walk those records again for nothing (the walk finds no more than it found,
 * until records are added). A rare term's first page cost 3.7–5.3 ms of PostgreSQL's time in that
 * walk before its matches were read (100k leads), as much as the rest of the search; SQLite's
 * first look is cheaper but not free. Only the path depends on it, never the page: both give the
 * same, the matches' path with an exact count.
 */
const rareSearches = new WeakMap<Queryable, Map<string, number>>();

function rareSearchesOf(store: Queryable): Map<string, number> {
  let known = rareSearches.get(store);
  if (known === undefined) rareSearches.set(store, (known = new Map()));
  return known;
}

/** Remembers a rare search; past crmRareSearchesMax the store starts over, so no stream of distinct searches grows it without bound. */
function remember(known: Map<string, number>, search: string, failedAt: number): void {
  if (known.size >= crmRareSearchesMax && !known.has(search)) known.clear();
  known.set(search, failedAt);
}

export interface RecordStoreOptions {
  /** Settings kept between requests; without it every request reads them (tools, tests). */
  settings?: SettingsCache;
  /** Where a search's statements go, when not to the store's own connection (Db.searchReads). */
  searchReads?: Queryable;
  /**
   * The settings as this request already read them (when it was signed in), for a store that
   * reads outside a transaction: the request is answered as of that moment, and does not read
   * the version again. Never for a write's store, which reads it inside its transaction.
   */
  seen?: SettingsSnapshot;
}

/** Fields the store writes itself, whatever `values` says. */
const systemManaged = new Set(["id", "created_at", "updated_at"]);

export class RecordStore implements SaveHost {
  readonly #schemas = new Map<CrmObject, Promise<ObjectSchema>>();
  readonly #sharing = new Map<CrmObject, Promise<SharingContext>>();
  readonly #accessWorlds = new Map<CrmObject, Promise<AccessWorld | null>>();
  #roles: Promise<RoleTree> | undefined;
  #snapshot: Promise<SettingsSnapshot> | undefined;

  private readonly settings?: SettingsCache;
  private readonly searchReads?: Queryable;

  constructor(
    readonly q: Queryable,
    readonly user: User,
    options: RecordStoreOptions = {},
  ) {
    this.settings = options.settings;
    this.searchReads = options.searchReads;
    if (options.seen !== undefined) this.#snapshot = Promise.resolve(options.seen);
  }

  /** `load`'s settings, from what the cache keeps at the version this request sees when there is one. */
  async #kept<T>(key: string, load: () => Promise<T>, at?: Promise<SettingsSnapshot | null>): Promise<T> {
    const settings = await (at ?? this.#snapshotOnce());
    return settings === null ? load() : settings.get(key, load);
  }

  #snapshotOnce(): Promise<SettingsSnapshot | null> {
    if (this.settings === undefined) return Promise.resolve(null);
    return (this.#snapshot ??= this.settings.snapshot(this.q));
  }

  schema(object: CrmObject): Promise<ObjectSchema> {
    let schema = this.#schemas.get(object);
    if (schema === undefined) this.#schemas.set(object, (schema = this.#kept(`schema:${object}`, () => loadSchema(this.q, object))));
    return schema;
  }

  roles(): Promise<RoleTree> {
    return (this.#roles ??= this.#roleTree());
  }

  // Each setting under one cache key with one loader; `at` is the version to read it at.
  #roleTree(at?: Promise<SettingsSnapshot | null>): Promise<RoleTree> {
    return this.#kept("roles", async () => new RoleTree(await loadRoles(this.q)), at);
  }

  #defaultAccess(at?: Promise<SettingsSnapshot | null>): ReturnType<typeof loadDefaultAccess> {
    return this.#kept("defaults", () => loadDefaultAccess(this.q), at);
  }

  #sharingRules(object: CrmObject, at?: Promise<SettingsSnapshot | null>): ReturnType<typeof loadSharingRules> {
    return this.#kept(`sharing:${object}`, () => loadSharingRules(this.q, object), at);
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
    const [roles, defaults, rules] = await Promise.all([this.roles(), this.#defaultAccess(), this.#sharingRules(object)]);
    return { user: this.user, roles, defaultAccess: defaults[object], rules };
  }

  /** A stored record as this user may see it: admin-only fields hidden from non-admins. */
  async view(object: CrmObject, record: RecordData): Promise<RecordData> {
    if (this.user.isAdmin) return record;
    const schema = await this.schema(object);
    return Object.fromEntries(Object.entries(record).filter(([name]) => schema.byName.get(name)?.adminOnly !== true));
  }

  /**
   * A page of `query`'s matches this user can see, and their count up to `limits.countMax`. A
   * search (q or updated_since) looks for its page among the user's `limits.searchNewestRows`
   * newest visible records first (fromNewest), so a common term costs what a page costs rather
   * than what its matches cost. A page not found there is chosen from all the matches, and they
   * are counted exactly. A search whose page was not found there last time goes to its matches
   * at once (rareSearches).
   */
  async list(object: CrmObject, query: ListQuery, limits: ListLimits): Promise<ListResult> {
    const [schema, sharing] = await Promise.all([this.schema(object), this.sharing(object)]);
    const p = new SqlParams();
    const matches = matchingIds(this.q.dialect, object, query.terms, updatedSince(query, "", p), p);
    if (matches === null) return this.#fromMatches(this.q, object, schema, sharing, query, limits.countMax, null, p);
    const q = this.searchReads ?? this.q;
    const rare = rareSearchesOf(this.q);
    const search = `${this.user.id}\n${object}\n${query.updatedSince ?? ""}\n${query.terms.join(" ")}`;
    // The matches the walk must find: the pages before, this one, and one past it. A walk that
    // could not find `failedAt` of them cannot find more (until records are added).
    const wanted = query.page * query.per + 1;
    const failedAt = rare.get(search);
    const knownRare = failedAt !== undefined && wanted >= failedAt;
    if (!knownRare) {
      const newest = await this.#fromNewest(q, object, schema, sharing, query, limits);
      if (newest !== null) return newest;
      remember(rare, search, Math.min(wanted, failedAt ?? wanted));
    }
    // Chosen from all the matches, counted exactly: SQLite drives the page from its index's
    // matches; PostgreSQL decides each match on its own row (fromVisibleMatches).
    const listed =
      q.dialect === "sqlite"
        ? await this.#fromMatches(q, object, schema, sharing, query, limits.countMax, matches, p)
        : await this.#fromVisibleMatches(q, object, schema, sharing, query, limits.countMax);
    // Matches enough that the page may now be among the newest records: look there again.
    if (knownRare && listed.total > limits.searchNewestRows) rare.delete(search);
    return listed;
  }

  /**
   * PostgreSQL's page chosen from all of a search's matches, counted exactly, in one statement.
   * Its trigram index is lossy, so every match's row is read to check it; the same read says
   * whether the user can see the record (accessPredicate, which single reads use too), so no
   * access row is probed: at 1M leads `ann smi` (2,012 matches) went 12.5 → 7.5 ms a request, two
   * statements and 2,012 probes fewer. The matches are MATERIALIZED: PostgreSQL's generic plan for
   * a LIKE of an unknown pattern otherwise walked the whole table backward by created_at (385 ms)
   * to stop at a page, though the count needs every match anyway.
   */
  async #fromVisibleMatches(
    q: Queryable,
    object: CrmObject,
    schema: ObjectSchema,
    sharing: SharingContext | null,
    query: ListQuery,
    countMax: number,
  ): Promise<ListResult> {
    const p = new SqlParams();
    const users = sharing === null ? [] : await this.#kept("users", () => listUsers(this.q));
    const owners = sharing === null ? null : accessibleOwners(sharing, users, "read");
    const rows =
      owners !== null && searchesPerOwner(owners, users.length, query.terms)
        ? ownersMatchingRows(object, owners, query.terms, updatedSince(query, "r.", p), p)
        : postgresMatchingRows(object, query.terms, [...updatedSince(query, "", p), access(sharing, schema, "read", p)], p);
    const countParams = p.values.length;
    const chosen = `SELECT id AS record_id, created_at AS record_created_at, ${windowCount} FROM matches
      ORDER BY created_at DESC, id DESC ${pageLimit(query.per, (query.page - 1) * query.per, p)}`;
    const pageSql = `WITH matches AS MATERIALIZED (${rows})
      SELECT ${schema.columns}, total_ FROM ${object} JOIN (${chosen}) AS chosen ON id = record_id ORDER BY record_created_at DESC, record_id DESC`;
    return this.#page(q, schema, pageSql, rows, p.values, countParams, query, countMax);
  }

  /**
   * The page read from the user's `searchNewestRows` newest visible records, newest first, each
   * checked against the search on its own row, stopping once the page and one match past it are
   * found; null when the page does not lie among those records. `total` then says "at least": the
   * matches up to the one past the page (total_exact false), as a mail search shows "1-20 of many"
   * rather than count every match. When those records are all the user can see, the page is
   * always served from them and counted exactly.
   */
  async #fromNewest(
    q: Queryable,
    object: CrmObject,
    schema: ObjectSchema,
    sharing: SharingContext | null,
    query: ListQuery,
    limits: ListLimits,
  ): Promise<ListResult | null> {
    const p = new SqlParams();
    const materialized = sharing !== null && accessIsMaterialized(sharing.defaultAccess);
    const visible = materialized ? `user_id = ${p.add(this.user.id)}` : access(sharing, schema, "read", p);
    const newestParams = p.values.length;
    /** The user's `rows` newest visible records. */
    const newest = (rows: number) =>
      materialized
        ? `SELECT record_id, record_created_at FROM ${accessTable(object)} WHERE ${visible} ORDER BY record_created_at DESC, record_id DESC LIMIT ${rows}`
        : `SELECT id AS record_id, created_at AS record_created_at FROM ${object} WHERE ${visible} ORDER BY created_at DESC, id DESC LIMIT ${rows}`;
    const hit = rowMatches(q.dialect, "o", query.terms, updatedSince(query, "o.", p), p);
    const hitParams = p.values.length;
    const skipped = (query.page - 1) * query.per;
    const wanted = skipped + query.per + 1;
    const lastRows = Math.trunc(limits.searchNewestRows) + 1;
    // On SQLite a first page is looked for among fewer rows first: a rare term shows itself
    // there, and the rest of the rows are not read for it. PostgreSQL plans every statement (~1
    // ms), more than the rows a first look saves it: a 2% term's first page went from 7.8 to 11.9
    // ms p99 at 100k leads with it.
    const firstRows = Math.trunc(limits.searchNewestRows / crmSearchFirstLookShare) + 1;
    const looks = q.dialect === "sqlite" && skipped === 0 && firstRows > 1 ? [firstRows, lastRows] : [lastRows];
    const limit = pageLimit(query.per + 1, skipped, p);
    for (const rows of looks) {
      // CROSS JOIN keeps SQLite's join order: the newest rows first, each probing its record.
      // The page selects the record's columns unqualified: the newest rows name theirs record_*.
      const hits = `FROM (${newest(rows)}) AS newest CROSS JOIN ${object} AS o WHERE o.id = newest.record_id AND ${hit}`;
      // How many newest rows there are rides along on each row (asked apart when none is found),
      // unless the user is known to have them all (seesAtLeast).
      const lookedAt = `SELECT count(*) AS n FROM (${newest(rows)}) AS newest`;
      const known = await this.#seesAtLeast(object, rows, false);
      const found = await q.all<Record<string, unknown>>(
        `SELECT ${schema.columns}${known ? "" : `, (${lookedAt}) AS looked_`} ${hits} ORDER BY newest.record_created_at DESC, newest.record_id DESC ${limit}`,
        p.values,
      );
      const more = found.length > query.per;
      const looked = known ? rows : Number(found[0]?.looked_ ?? (await q.get<{ n: number }>(lookedAt, p.values.slice(0, newestParams)))!.n);
      if (!known && looked === rows) await this.#seesAtLeast(object, rows, true);
      if (looked < rows) {
        // The newest rows are all the user can see: the count is exact, and cheap at this size.
        const countAll = more || (found.length === 0 && skipped > 0);
        const total = countAll ? Number((await q.get<{ n: number }>(`SELECT count(*) AS n ${hits}`, p.values.slice(0, hitParams)))!.n) : skipped + found.length;
        return this.#newestPage(schema, query, found, total, total <= limits.countMax, limits.countMax);
      }
      if (more) return this.#newestPage(schema, query, found, skipped + found.length, false, limits.countMax);
      // Matches as sparse as the first rows show would not fill the page from the rest.
      if (found.length * (lastRows / rows) < wanted) return null;
    }
    return null;
  }

  /**
   * Whether this user is known to see at least `rows` records of `object`, at the settings
   * version the request sees; `learned` true remembers that they do. The walk of the newest records
   * counted them on every search, ~0.3 of PostgreSQL's 1.3 ms for a common term at 100k leads,
   * though a user who has that many keeps having them. Only that is remembered, never fewer: a
   * user known to have fewer is counted each time, so one who can see no more than those rows gets
   * an exact count. A change of settings (sharing, roles, users) forgets it all; records deleted
   * or given away meanwhile can leave a user with fewer, who then gets "at least" (a true lower
   * bound, total_exact false) rather than the exact count until the next one.
   */
  async #seesAtLeast(object: CrmObject, rows: number, learned: boolean): Promise<boolean> {
    const settings = await this.#snapshotOnce();
    if (settings === null) return false;
    const key = `sees:${object}:${this.user.id}:${rows}`;
    return settings.get(
      key,
      () => Promise.resolve(learned),
      (known) => known,
    );
  }

  /** The answer of a page found among the newest rows (`found` holds it and the match after it, if any). */
  #newestPage(schema: ObjectSchema, query: ListQuery, found: Record<string, unknown>[], total: number, exact: boolean, countMax: number): ListResult {
    return {
      data: found.slice(0, query.per).map((row) => rowToRecord(schema, row, this.user.isAdmin)),
      page: query.page,
      per: query.per,
      total: Math.min(total, countMax),
      total_exact: exact,
    };
  }

  /**
   * A page chosen from all of `matches` (a SELECT of match_id whose parameters `p` holds), or of
   * all the records when it is null, counted up to `countMax`.
   */
  async #fromMatches(
    q: Queryable,
    object: CrmObject,
    schema: ObjectSchema,
    sharing: SharingContext | null,
    query: ListQuery,
    countMax: number,
    matches: string | null,
    p: SqlParams,
  ): Promise<ListResult> {
    const limit = () => pageLimit(query.per, (query.page - 1) * query.per, p);
    // A list driven from matches (SQLite's index) reads every match to sort them, so the count
    // rides along. (PostgreSQL's searches take fromVisibleMatches.)
    const carryCount = matches !== null;
    if (sharing !== null && accessIsMaterialized(sharing.defaultAccess)) {
      // The user's own access rows, newest first: the page is chosen and the matches counted on
      // those narrow rows, and only the page's records are read.
      const user = p.add(this.user.id);
      const visible =
        matches === null
          ? `SELECT record_id, record_created_at FROM ${accessTable(object)} WHERE user_id = ${user}`
          : // CROSS JOIN keeps SQLite's join order: each match probes its access row.
            `SELECT record_id, record_created_at FROM (${matches}) AS matches CROSS JOIN ${accessTable(object)} WHERE record_id = match_id AND user_id = ${user}`;
      const countParams = p.values.length;
      const chosen = `SELECT record_id, record_created_at${carryCount ? `, ${windowCount}` : ""} FROM (${visible}) AS visible
        ORDER BY record_created_at DESC, record_id DESC ${limit()}`;
      const total = carryCount ? ", total_" : `, ${cappedCount(visible, countMax)} AS total_`;
      const pageSql = `SELECT ${schema.columns}${total} FROM ${object} JOIN (${chosen}) AS chosen ON id = record_id
        ORDER BY record_created_at DESC, record_id DESC`;
      return this.#page(q, schema, pageSql, visible, p.values, countParams, query, countMax);
    }
    // An admin, or a default that lets everyone read: the table itself (accessPredicate is 1 = 1).
    const everyone = access(sharing, schema, "read", p);
    const rows = matches === null ? `SELECT id FROM ${object} WHERE ${everyone}` : matches;
    const countParams = p.values.length;
    const pageSql =
      matches === null
        ? `SELECT ${schema.columns}, ${cappedCount(rows, countMax)} AS total_ FROM ${object} WHERE ${everyone} ORDER BY created_at DESC, id DESC ${limit()}`
        : `SELECT ${schema.columns}${carryCount ? `, ${windowCount}` : ""} FROM (${matches}) AS matches CROSS JOIN ${object} WHERE id = match_id
            ORDER BY created_at DESC, id DESC ${limit()}`;
    return this.#page(q, schema, pageSql, rows, p.values, countParams, query, countMax);
  }

  /**
   * Runs a list's page query and counts the rows of `countedRows` (a SELECT) up to `countMax` and no
   * further, so a count never walks every row a user can see; it uses the first `countParams`
   * parameters. A page query that carries the count (`total_`: every match's when it read them
   * all anyway, a plain list's cappedCount) saves the second query, unless the page is past the
   * last match and has no row to carry it.
   */
  async #page(
    q: Queryable,
    schema: ObjectSchema,
    pageSql: string,
    countedRows: string,
    params: unknown[],
    countParams: number,
    query: ListQuery,
    countMax: number,
  ): Promise<ListResult> {
    const rows = await q.all<Record<string, unknown>>(pageSql, params);
    const carried = rows[0]?.total_;
    const counted =
      carried !== undefined
        ? Number(carried)
        : Number((await q.get<{ n: number }>(`SELECT ${cappedCount(countedRows, countMax)} AS n`, params.slice(0, countParams)))!.n);
    const data = rows.map((row) => rowToRecord(schema, row, this.user.isAdmin));
    return { data, page: query.page, per: query.per, total: Math.min(counted, countMax), total_exact: counted <= countMax };
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
    return this.#kept(`rules:${object}`, () => loadRuleSet(this.q, object));
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
      columns.push("updated_at");
      placeholders.push(params.add(now));
      // Set only when it changes: the search index's trigger runs whenever the column is set (a
      // workflow's field update would re-index the record for nothing).
      const search = searchText(schema, merged);
      if (search !== searchText(schema, old)) {
        columns.push("search_text");
        placeholders.push(params.add(search));
      }
      const sets = columns.map((c, i) => `${c} = ${placeholders[i]}`).join(", ");
      row = await this.q.get(`UPDATE ${object} SET ${sets} WHERE id = ${params.add(old.id)} RETURNING ${schema.columns}`, params.values);
    }
    await this.#refreshAccess(object, Number(row!.id), old, merged);
    return rowToRecord(schema, row!, true);
  }

  /**
   * The saved record's materialized access (sharing/access-rows.ts), when its object has any: on
   * a create, and on a change of what access depends on — the owner, or a field a criteria rule
   * reads. A change of anything else leaves who can read the record as it was.
   */
  async #refreshAccess(object: CrmObject, id: number, old: RecordData | null, merged: RecordData): Promise<void> {
    let world = this.#accessWorlds.get(object);
    if (world === undefined) this.#accessWorlds.set(object, (world = this.#loadAccessWorld(object)));
    const loaded = await world;
    if (loaded === null) return;
    if (old !== null) {
      const decisive = [ownerField, ...loaded.rules.flatMap((rule) => (rule.criteria ?? []).map((c) => c.field))];
      if (decisive.every((field) => merged[field] === old[field])) return;
    }
    await refreshRecordAccess(this.q, loaded, id, old === null);
  }

  /**
   * What `object`'s access rows depend on, or null when it keeps none. Read after taking the save
   * lock, never from what this store read before it (sharing()): a rebuild that committed while
   * we waited for the lock changed it. The lock lasts to the end of the transaction, so the saves
   * after the first one (a flow's creates) reuse what it read.
   */
  async #loadAccessWorld(object: CrmObject): Promise<AccessWorld | null> {
    await lockForRecordAccess(this.q);
    // The version as it is now, after the lock: what the cache keeps for it is what the lock
    // protects. On SQLite the transaction has held the database's one write lock since it began,
    // so the version this store read first is still the one now.
    const now = this.q.dialect === "sqlite" ? this.#snapshotOnce() : (this.settings?.snapshot(this.q) ?? Promise.resolve(null));
    const defaults = await this.#defaultAccess(now);
    if (!accessIsMaterialized(defaults[object])) return null;
    const [schema, users, roles, rules] = await Promise.all([
      this.schema(object),
      this.#kept("users", () => listUsers(this.q), now),
      this.#roleTree(now),
      this.#sharingRules(object, now),
    ]);
    return { object, schema, users, roles, defaultAccess: defaults[object], rules };
  }

  async read(object: CrmObject, id: number): Promise<RecordData | null> {
    const schema = await this.schema(object);
    const row = await this.q.get(`SELECT ${schema.columns} FROM ${object} WHERE id = $1`, [id]);
    return row === undefined ? null : rowToRecord(schema, row, true);
  }
}
