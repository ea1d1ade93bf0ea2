/**
 * The HTML of the admin pages for validation rules, workflow rules and flows: the rules of a kind,
 * and a form that writes one. The simple parts are inputs (name, object, active, trigger, error
 * field and message, workflow field updates, conditions of up to ten comparisons in one all/any
 * group); a nested condition and a flow's steps are JSON, in the shape docs/crm-rules.md gives.
 */
import type { User } from "../auth/users.ts";
import { ops } from "../rules/condition.ts";
import { flowEntryModes, flowTimings, flowTriggers } from "../rules/flow.ts";
import { crmObjects } from "../rules/record.ts";
import type { RuleKind } from "../rules/rule-set.ts";
import { workflowTriggers } from "../rules/workflow-rule.ts";
import { crmWorkflowUpdatesMax } from "../../core/limits.ts";
import { conditionRowsMax, type Schemas } from "./admin-forms.ts";
import { fieldReference } from "./admin-pages.ts";
import { actionButton, checkbox, comparisonRows, errorsAt, type FormView, problemList, rowCount, selectInput, textarea, textInput } from "./form-html.ts";
import { escapeHtml } from "./html.ts";
import { layout } from "./layout.ts";

/** Each kind's page: its path under /settings (the API's under /api/v1/settings) and its names. */
export const rulePages: { kind: RuleKind; path: string; title: string; one: string }[] = [
  { kind: "validation", path: "validation-rules", title: "Validation rules", one: "validation rule" },
  { kind: "workflow", path: "workflow-rules", title: "Workflow rules", one: "workflow rule" },
  { kind: "flow", path: "flows", title: "Flows", one: "flow" },
];

export interface RulesPageView {
  kind: RuleKind;
  user: User;
  /** The kind's definitions as the settings API lists them. */
  definitions: Record<string, unknown>[];
  schemas: Schemas;
  form: FormView;
  /** The id of the definition the form replaces; absent when it adds one. */
  replacing?: number;
  /** Why the definition asked to be changed cannot be shown in the form. */
  notice?: string;
}

function summary(kind: RuleKind, d: Record<string, unknown>): string {
  if (kind === "validation") return `on ${escapeHtml(String(d.error_field ?? "base"))}: ${escapeHtml(String(d.message))}`;
  if (kind === "workflow") {
    const updates = (d.updates as { field: string }[]).map((u) => `<code>${escapeHtml(u.field)}</code>`).join(", ");
    return `${escapeHtml(String(d.trigger))}; sets ${updates}`;
  }
  return `${escapeHtml(String(d.timing))}, ${escapeHtml(String(d.trigger))}; ${(d.steps as unknown[]).length} steps`;
}

function definitionRow(page: (typeof rulePages)[number], d: Record<string, unknown>): string {
  const { id, created_at: _, ...definition } = d;
  return `
    <tr data-rule-id="${id}" data-name="${escapeHtml(String(d.name))}"><td class="name">${escapeHtml(String(d.name))}</td><td>${escapeHtml(String(d.object))}</td>
      <td class="active">${d.active === true ? "yes" : "no"}</td><td>${summary(page.kind, d)}
        <details><summary>JSON</summary><pre>${escapeHtml(JSON.stringify(definition, null, 2))}</pre></details></td>
      <td><a href="/settings/${page.path}?edit=${id}" class="edit">Change</a> ${actionButton(`/settings/${page.path}/${id}/delete`, "Delete", "delete")}</td></tr>`;
}

/** A condition's inputs: all/any, comparison rows, or JSON instead. */
function conditionInputs(v: FormView, prefix: string, legend: string): string {
  return `<fieldset data-condition="${prefix}"><legend>${escapeHtml(legend)}</legend>
    ${selectInput(v, `${prefix}.match`, "Rows must hold", [
      ["all", "all of them"],
      ["any", "any of them"],
    ])}
    ${comparisonRows(v, prefix, ops, rowCount(v, prefix, 3, conditionRowsMax), "in: values separated by commas")}
    ${textarea(v, `${prefix}.json`, "…or the whole condition as JSON (for nested all/any groups; leave the rows empty)", 4, '{"all": [{"field": "rating", "op": "eq", "value": "Hot"}]}')}
    ${errorsAt(v, prefix)}
  </fieldset>`;
}

function updateInputs(v: FormView): string {
  let rows = "";
  for (let i = 0; i < rowCount(v, "updates", 3, crmWorkflowUpdatesMax); i++) {
    const at = `updates.${i}`;
    rows += `
    <div class="row" data-row="${at}">${textInput(v, `${at}.field`, "Field", 'size="18"')}${selectInput(
      v,
      `${at}.kind`,
      "Set to",
      [
        ["value", "the value"],
        ["ref", "the value of field"],
        ["template", "the text template"],
      ],
      "value",
    )}${textInput(v, `${at}.value`, "Value", 'size="36"')}${errorsAt(v, at)}</div>`;
  }
  return `<fieldset><legend>Field updates (an empty value clears the field; a template is text with {field} placeholders)</legend>${rows}${errorsAt(v, "updates")}</fieldset>`;
}

const stepsExample = `[{"type": "set_field", "field": "cf_tier", "value": "Key"},
 {"type": "create_record", "object": "cases", "values": {"subject": {"template": "Review {name}"}, "account_id": {"ref": "id"}}}]`;

function kindInputs(kind: RuleKind, v: FormView): string {
  if (kind === "validation") {
    return `${conditionInputs(v, "condition", "Condition: when it holds, the record is refused")}
  ${textInput(v, "error_field", "Field the error is shown on (empty: the record as a whole)", 'size="24"')}
  ${textInput(v, "message", "Error message", 'size="60"')}`;
  }
  if (kind === "workflow") {
    return `${selectInput(v, "trigger", "Runs", workflowTriggers, "created_and_edited")}
  ${conditionInputs(v, "condition", "Condition")}
  ${updateInputs(v)}`;
  }
  return `${selectInput(v, "timing", "Timing", flowTimings, "after_save")}
  ${selectInput(v, "trigger", "Trigger", flowTriggers, "created")}
  ${selectInput(v, "entry_mode", "Entry mode", flowEntryModes, "every_time")}
  ${conditionInputs(v, "entry", "Entry condition (empty: every save)")}
  ${textarea(v, "steps", "Steps, as JSON (docs/crm-rules.md, Flows)", 10, stepsExample)}`;
}

export function rulesPage(view: RulesPageView): string {
  const page = rulePages.find((p) => p.kind === view.kind)!;
  const rows =
    view.definitions.length === 0 ? `<tr><td colspan="5">No ${page.one}s yet.</td></tr>` : view.definitions.map((d) => definitionRow(page, d)).join("");
  const v = view.form;
  const action = view.replacing === undefined ? `/settings/${page.path}` : `/settings/${page.path}/${view.replacing}/replace`;
  return layout(
    page.title,
    `
<h1>${page.title}</h1>
<table id="rules">
  <thead><tr><th>Name</th><th>Object</th><th>Active</th><th>What it does</th><th></th></tr></thead>
  <tbody>${rows}
  </tbody>
</table>
<h2>${view.replacing === undefined ? `Add a ${page.one}` : `Change ${page.one} ${view.replacing}`}</h2>
<p class="note">The API changes a ${page.one} only by deleting it and creating it again. Changing one here does both in one
transaction — if the new definition is refused, the old one stays as it was — and it gets a new id. To pause one, change it
and clear Active.</p>
${view.notice === undefined ? "" : `<p class="error" id="notice" role="alert">${escapeHtml(view.notice)}</p>`}
<form method="post" action="${action}" id="rule-form">
  ${problemList(v)}
  ${textInput(v, "name", "Name (letters, digits and _)", 'size="40"')}
  ${selectInput(v, "object", "Object", [...crmObjects], "leads")}
  ${checkbox(v, "active", "Active", true)}
  ${kindInputs(view.kind, v)}
  ${fieldReference(view.schemas)}
  <button type="submit" id="save-rule">${view.replacing === undefined ? `Add ${page.one}` : `Replace ${page.one}`}</button>
  ${view.replacing === undefined ? "" : `<a href="/settings/${page.path}">Cancel</a>`}
</form>`,
    view.user,
  );
}
