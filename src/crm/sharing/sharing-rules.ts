/**
 * Sharing settings of an object: its default access (Salesforce's organization-wide default)
 * and its sharing rules, which only ever widen access. An owner-based rule opens the records
 * owned by users in one role (and optionally its subordinates); a criteria-based rule opens the
 * records whose fields match. Either one is granted to the users of a target role (and
 * optionally its subordinates) — and, through the hierarchy, to their managers.
 */
import { SvcError } from "../../core/errors.ts";
import { crmSharingRulesMax } from "../../core/limits.ts";
import { RoleTree, loadRoles } from "../auth/roles.ts";
import { listUsers, type User } from "../auth/users.ts";
import { isCrmObject } from "../objects/fields.ts";
import { loadSchema } from "../objects/schema.ts";
import { type CrmObject, crmObjects, type FieldError } from "../rules/record.ts";
import type { Queryable } from "../store/db.ts";
import { storableTextProblem } from "../objects/text.ts";
import { type AccessWorld, addUserAccess, rebuildObjectAccess } from "./access-rows.ts";
import { type Criterion, parseCriteria } from "./criteria.ts";
import { accessLevels, type DefaultAccess, defaultAccessDefault, type SharingRule } from "./sharing-settings.ts";

export { accessLevels, type DefaultAccess, defaultAccessDefault, type SharingRule } from "./sharing-settings.ts";

type RuleRow = {
  id: number;
  object: string;
  name: string;
  access: string;
  target_role_id: number;
  target_subordinates: number;
  owner_role_id: number | null;
  owner_subordinates: number;
  criteria: string | null;
};

const ruleFromRow = (r: RuleRow): SharingRule => ({
  id: Number(r.id),
  object: r.object as CrmObject,
  name: r.name,
  access: r.access as SharingRule["access"],
  targetRoleId: Number(r.target_role_id),
  targetSubordinates: Number(r.target_subordinates) === 1,
  ownerRoleId: r.owner_role_id === null ? null : Number(r.owner_role_id),
  ownerSubordinates: Number(r.owner_subordinates) === 1,
  criteria: r.criteria === null ? null : (JSON.parse(r.criteria) as Criterion[]),
});

const ruleColumns = "id, object, name, access, target_role_id, target_subordinates, owner_role_id, owner_subordinates, criteria";

export async function loadSharingRules(q: Queryable, object?: CrmObject): Promise<SharingRule[]> {
  const rows =
    object === undefined
      ? await q.all<RuleRow>(`SELECT ${ruleColumns} FROM sharing_rules ORDER BY id`)
      : await q.all<RuleRow>(`SELECT ${ruleColumns} FROM sharing_rules WHERE object = $1 ORDER BY id`, [object]);
  return rows.map(ruleFromRow);
}

export async function loadDefaultAccess(q: Queryable): Promise<Record<CrmObject, DefaultAccess>> {
  const rows = await q.all<{ object: string; default_access: string }>("SELECT object, default_access FROM object_settings");
  const out = Object.fromEntries(crmObjects.map((o) => [o, defaultAccessDefault])) as Record<CrmObject, DefaultAccess>;
  for (const r of rows) if (isCrmObject(r.object)) out[r.object] = r.default_access as DefaultAccess;
  return out;
}

/** Everything that decides who reads `object`'s records, read in the caller's transaction. */
export async function loadAccessWorld(q: Queryable, object: CrmObject): Promise<AccessWorld> {
  const [schema, users, roles, defaults, rules] = await Promise.all([
    loadSchema(q, object),
    listUsers(q),
    loadRoles(q).then((r) => new RoleTree(r)),
    loadDefaultAccess(q),
    loadSharingRules(q, object),
  ]);
  return { object, schema, users, roles, defaultAccess: defaults[object], rules };
}

/**
 * Rewrites the materialized access of every object (access-rows.ts): `svc crm sharing
 * recalculate` after records were loaded straight into the database, and the migration that
 * introduced it.
 */
export async function rebuildAllAccess(tx: Queryable): Promise<void> {
  for (const object of crmObjects) await rebuildObjectAccess(tx, await loadAccessWorld(tx, object));
}

/** A new user's materialized access, in the transaction that added them. */
export async function addUserToAccess(tx: Queryable, user: User): Promise<void> {
  for (const object of crmObjects) await addUserAccess(tx, await loadAccessWorld(tx, object), user);
}

/** PATCH /api/v1/settings/sharing/defaults: `{object: access, ...}`, all or nothing. */
export async function setDefaultAccess(tx: Queryable, body: unknown): Promise<void> {
  const b = body as Record<string, unknown> | null;
  if (typeof b !== "object" || b === null || Array.isArray(b)) throw invalid([{ field: "base", message: "expected {object: access}" }]);
  const errors: FieldError[] = [];
  for (const [object, access] of Object.entries(b)) {
    if (!isCrmObject(object)) errors.push({ field: object, message: "unknown object" });
    else if (!(accessLevels as readonly unknown[]).includes(access)) errors.push({ field: object, message: `one of ${accessLevels.join(", ")}` });
  }
  if (errors.length > 0) throw invalid(errors);
  for (const [object, access] of Object.entries(b)) {
    // One upsert: two admins setting a default at once on PostgreSQL both found no row to update
    // and the second insert failed (409).
    await tx.run(
      "INSERT INTO object_settings (object, default_access) VALUES ($1, $2) ON CONFLICT (object) DO UPDATE SET default_access = excluded.default_access",
      [object, access],
    );
    await rebuildObjectAccess(tx, await loadAccessWorld(tx, object as CrmObject));
  }
}

const invalid = (details: FieldError[]) => new SvcError("invalid", "invalid sharing setting", { details });

const ruleKeys = new Set(["object", "name", "access", "share_with", "owned_by", "criteria"]);

/** Reads `{role, include_subordinates}`, reporting under `at`. */
function roleRef(raw: unknown, roles: RoleTree, at: string, errors: FieldError[]): { id: number; subordinates: boolean } | undefined {
  const r = raw as { role?: unknown; include_subordinates?: unknown } | null;
  const role = typeof r?.role === "string" ? roles.byName.get(r.role) : undefined;
  if (typeof r !== "object" || r === null || role === undefined) {
    errors.push({ field: `${at}.role`, message: "must name an existing role" });
    return undefined;
  }
  if (r.include_subordinates !== undefined && typeof r.include_subordinates !== "boolean") {
    errors.push({ field: `${at}.include_subordinates`, message: "must be true or false" });
    return undefined;
  }
  return { id: role.id, subordinates: r.include_subordinates === true };
}

/** POST /api/v1/settings/sharing/rules. */
export async function addSharingRule(tx: Queryable, body: unknown): Promise<SharingRule> {
  const b = body as Record<string, unknown> | null;
  if (typeof b !== "object" || b === null || Array.isArray(b)) throw invalid([{ field: "base", message: "expected a JSON object" }]);
  const errors: FieldError[] = [];
  for (const key of Object.keys(b)) if (!ruleKeys.has(key)) errors.push({ field: key, message: "unknown field" });
  const object = typeof b.object === "string" && isCrmObject(b.object) ? b.object : undefined;
  if (object === undefined) errors.push({ field: "object", message: `one of ${crmObjects.join(", ")}` });
  const nameProblem = typeof b.name !== "string" || b.name.length < 1 || b.name.length > 100 ? "1 to 100 characters" : storableTextProblem(b.name);
  if (nameProblem !== null) errors.push({ field: "name", message: nameProblem });
  if (b.access !== "read" && b.access !== "read_write") errors.push({ field: "access", message: "read or read_write" });
  const roles = new RoleTree(await loadRoles(tx));
  const target = roleRef(b.share_with, roles, "share_with", errors);
  let owner: { id: number; subordinates: boolean } | undefined;
  let criteria: Criterion[] | undefined;
  if ((b.owned_by === undefined) === (b.criteria === undefined)) {
    errors.push({ field: "base", message: "give exactly one of owned_by (owner-based) or criteria (criteria-based)" });
  } else if (b.owned_by !== undefined) {
    owner = roleRef(b.owned_by, roles, "owned_by", errors);
  } else if (object !== undefined) {
    criteria = parseCriteria(b.criteria, await loadSchema(tx, object), "criteria", errors);
  }
  if (errors.length > 0 || object === undefined || target === undefined) throw invalid(errors);
  if ((await loadSharingRules(tx, object)).length >= crmSharingRulesMax)
    throw new SvcError("conflict", `at most ${crmSharingRulesMax} sharing rules per object`);
  const row = await tx.get<RuleRow>(
    `INSERT INTO sharing_rules (object, name, access, target_role_id, target_subordinates, owner_role_id, owner_subordinates, criteria, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${ruleColumns}`,
    [
      object,
      b.name,
      b.access,
      target.id,
      target.subordinates ? 1 : 0,
      owner?.id ?? null,
      owner?.subordinates ? 1 : 0,
      criteria === undefined ? null : JSON.stringify(criteria),
      new Date().toISOString(),
    ],
  );
  await rebuildObjectAccess(tx, await loadAccessWorld(tx, object));
  return ruleFromRow(row!);
}

export async function deleteSharingRule(tx: Queryable, id: number): Promise<boolean> {
  const deleted = await tx.get<{ object: string }>("DELETE FROM sharing_rules WHERE id = $1 RETURNING object", [id]);
  if (deleted === undefined) return false;
  if (isCrmObject(deleted.object)) await rebuildObjectAccess(tx, await loadAccessWorld(tx, deleted.object));
  return true;
}

/** A rule as the settings API shows it, roles by name. */
export function sharingRuleView(rule: SharingRule, roles: RoleTree) {
  const name = (id: number) => roles.roles.find((r) => r.id === id)?.name ?? null;
  return {
    id: rule.id,
    object: rule.object,
    name: rule.name,
    access: rule.access,
    share_with: { role: name(rule.targetRoleId), include_subordinates: rule.targetSubordinates },
    ...(rule.ownerRoleId !== null ? { owned_by: { role: name(rule.ownerRoleId), include_subordinates: rule.ownerSubordinates } } : {}),
    ...(rule.criteria !== null ? { criteria: rule.criteria } : {}),
  };
}
