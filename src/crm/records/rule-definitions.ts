/**
 * Stored rule definitions (validation rules, workflow rules, flows) behind the settings routes.
 * The rules engine's parseRule checks a definition before it is stored, and its canonical form is
 * what is kept; buildRuleSet turns an object's stored ones into what a save runs.
 */
import { SvcError } from "../../core/errors.ts";
import { crmRuleDefinitionsMax } from "../../core/limits.ts";
import { type CrmObject, crmObjects } from "../rules/record.ts";
import { buildRuleSet, parseRule, type RuleKind, type RuleSet } from "../rules/rule-set.ts";
import type { Queryable } from "../store/db.ts";
import { ruleParseOptions } from "../objects/rule-writes.ts";
import { loadSchema, type ObjectSchema } from "../objects/schema.ts";

export interface RuleDefinitionView {
  id: number;
  kind: RuleKind;
  definition: Record<string, unknown>;
  created_at: string;
}

type DefinitionRow = { id: number; kind: string; object: string; name: string; active: number; definition: string; created_at: string };

type ActiveRow = Pick<DefinitionRow, "id" | "kind" | "definition">;

/** Per object, the RuleSet last built and the rows it was built from. Shared by every request: read only. */
const built = new Map<CrmObject, { rows: ActiveRow[]; rules: RuleSet }>();

const sameRows = (a: readonly ActiveRow[], b: readonly ActiveRow[]) =>
  a.length === b.length && a.every((r, i) => Number(r.id) === Number(b[i]!.id) && r.kind === b[i]!.kind && r.definition === b[i]!.definition);

/**
 * The RuleSet a save of `object` runs. The active definitions are read every time (another server
 * process may have added or deleted one); they are parsed again only when they differ from the
 * rows the last RuleSet was built from. Compared by content, not by id alone: that holds for any
 * database this process opens (tests open many) and whatever becomes of ids.
 */
export async function loadRuleSet(q: Queryable, object: CrmObject): Promise<RuleSet> {
  const rows = await q.all<ActiveRow>("SELECT id, kind, definition FROM rule_definitions WHERE object = $1 AND active = 1 ORDER BY id", [object]);
  const last = built.get(object);
  if (last !== undefined && sameRows(last.rows, rows)) return last.rules;
  const rules = buildRuleSet(
    object,
    rows.map((r) => ({ kind: r.kind as RuleKind, definition: JSON.parse(r.definition) })),
  );
  built.set(object, { rows, rules });
  return rules;
}

/** A definition as the settings API shows it: its stored JSON with the id beside it. */
const view = (r: DefinitionRow) => ({ id: Number(r.id), ...(JSON.parse(r.definition) as Record<string, unknown>), created_at: r.created_at });

export async function listRuleDefinitions(q: Queryable, kind: RuleKind) {
  const rows = await q.all<DefinitionRow>("SELECT id, kind, object, name, active, definition, created_at FROM rule_definitions WHERE kind = $1 ORDER BY id", [
    kind,
  ]);
  return rows.map(view);
}

/**
 * Every object's current schema, for the parser to refuse rules naming fields that do not exist or
 * writing values their fields can never hold (objects/rule-writes.ts).
 */
async function schemas(q: Queryable): Promise<Map<CrmObject, ObjectSchema>> {
  const out = new Map<CrmObject, ObjectSchema>();
  for (const object of crmObjects) out.set(object, await loadSchema(q, object));
  return out;
}

export async function addRuleDefinition(tx: Queryable, kind: RuleKind, body: unknown) {
  const parsed = parseRule(kind, body, ruleParseOptions(await schemas(tx)));
  if ("details" in parsed) throw new SvcError("invalid", "invalid rule", { details: parsed.details });
  const rule = parsed.rule as { name: string; object: CrmObject; active: boolean };
  const count = await tx.get<{ n: number }>("SELECT count(*) AS n FROM rule_definitions WHERE object = $1 AND kind = $2", [rule.object, kind]);
  if (Number(count!.n) >= crmRuleDefinitionsMax) throw new SvcError("conflict", `at most ${crmRuleDefinitionsMax} ${kind} rules per object`);
  const taken = await tx.get("SELECT id FROM rule_definitions WHERE object = $1 AND kind = $2 AND name = $3", [rule.object, kind, rule.name]);
  if (taken !== undefined) throw new SvcError("conflict", `${rule.object} already has a ${kind} rule named ${JSON.stringify(rule.name)}`);
  const row = await tx.get<DefinitionRow>(
    `INSERT INTO rule_definitions (kind, object, name, active, definition, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING id, kind, object, name, active, definition, created_at`,
    [kind, rule.object, rule.name, rule.active ? 1 : 0, JSON.stringify(rule), new Date().toISOString()],
  );
  return view(row!);
}

export async function deleteRuleDefinition(tx: Queryable, kind: RuleKind, id: number): Promise<boolean> {
  return (await tx.run("DELETE FROM rule_definitions WHERE id = $1 AND kind = $2", [id, kind])) > 0;
}
