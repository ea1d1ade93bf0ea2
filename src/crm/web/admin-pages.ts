/**
 * The HTML of the admin pages for custom fields and sharing (rules have rule-pages.ts), and the
 * pieces they share: the refusal a non-admin gets, and the list of every object's fields an admin
 * names in forms. Each page says what the API lets one change, and what it only lets one delete
 * and create again.
 */
import type { User } from "../auth/users.ts";
import type { CustomFieldView } from "../objects/custom-fields.ts";
import { customFieldTypes } from "../objects/fields.ts";
import { crmObjects } from "../rules/record.ts";
import { criterionOps } from "../sharing/criteria.ts";
import { accessLevels, type DefaultAccess } from "../sharing/sharing-rules.ts";
import type { Schemas } from "./admin-forms.ts";
import {
  actionButton,
  checkbox,
  comparisonRows,
  errorsAt,
  type FormView,
  problemList,
  rowCount,
  selectInput,
  textarea,
  textInput,
  inputValue,
} from "./form-html.ts";
import { escapeHtml } from "./html.ts";
import { layout } from "./layout.ts";

export function forbiddenPage(user: User): string {
  return layout("Admins only", `<h1>Admins only</h1><p class="error" id="error" role="alert">Only an admin may manage these settings.</p>`, user);
}

/** Every object's fields with their types, folded away: the names the forms take. */
export function fieldReference(schemas: Schemas): string {
  const items = crmObjects.map((object) => {
    const fields = (schemas.get(object)?.fields ?? []).map((f) => {
      const values = f.values === undefined ? "" : `: ${f.values.join(", ")}`;
      return `<code>${escapeHtml(f.name)}</code> (${escapeHtml(f.type)}${escapeHtml(values)})`;
    });
    return `<li><strong>${object}</strong>: ${fields.join(", ")}</li>`;
  });
  return `<details class="fields"><summary>Fields of each object</summary><ul>${items.join("")}</ul></details>`;
}

const objectOptions = crmObjects.map((o) => o as string);

export interface FieldsPageView {
  user: User;
  fields: CustomFieldView[];
  form: FormView;
}

export function fieldsPage(view: FieldsPageView): string {
  const rows =
    view.fields.length === 0
      ? `<tr><td colspan="6">No custom fields yet.</td></tr>`
      : view.fields
          .map(
            (f) => `
    <tr data-field="${escapeHtml(f.api_name)}" data-object="${f.object}"><td>${f.object}</td><td><code>${escapeHtml(f.api_name)}</code></td><td>${f.type}</td>
      <td>${f.required ? "yes" : ""}</td><td>${f.admin_only ? "yes" : ""}</td><td>${escapeHtml((f.values ?? []).join(", "))}</td></tr>`,
          )
          .join("");
  const v = view.form;
  return layout(
    "Custom fields",
    `
<h1>Custom fields</h1>
<p class="note">Fields are added, never changed or removed — through this page or the API: changing a field's type would
rewrite the values stored in it, and removing it would lose them (docs/crm.md).</p>
<table id="fields">
  <thead><tr><th>Object</th><th>API name</th><th>Type</th><th>Required</th><th>Admin only</th><th>Picklist values</th></tr></thead>
  <tbody>${rows}
  </tbody>
</table>
<h2>Add a field</h2>
<form method="post" action="/settings/fields" id="field-form">
  ${problemList(v)}
  ${selectInput(v, "object", "Object", objectOptions, "accounts")}
  ${textInput(v, "name", "Name (records hold it as cf_<name>)", 'size="30"')}
  ${selectInput(v, "type", "Type", customFieldTypes, "text")}
  ${textarea(v, "values", "Picklist values, one per line (picklists only)", 4)}
  ${checkbox(v, "required", "Required", false)}
  ${checkbox(v, "admin_only", "Admin only (hidden from other users)", false)}
  <button type="submit" id="add-field">Add field</button>
</form>`,
    view.user,
  );
}

export interface SharingPageView {
  user: User;
  defaults: Record<string, DefaultAccess>;
  /** Rules as the settings API shows them. */
  rules: Record<string, unknown>[];
  roles: string[];
  schemas: Schemas;
  defaultsForm: FormView;
  ruleForm: FormView;
  /** The id of the rule the form replaces; absent when it adds one. */
  replacing?: number;
  /** Why the rule asked to be changed cannot be shown in the form. */
  notice?: string;
}

/** A role a rule names, as `{role, include_subordinates}`. */
function ref(r: unknown): string {
  const x = r as { role: string | null; include_subordinates: boolean } | undefined;
  if (x === undefined) return "";
  return `${escapeHtml(x.role ?? "?")}${x.include_subordinates ? " and below" : ""}`;
}

function describeRule(rule: Record<string, unknown>): string {
  if (rule.owned_by !== undefined) return `owned by ${ref(rule.owned_by)}`;
  const criteria = (rule.criteria as { field: string; op: string; value: unknown }[]) ?? [];
  return criteria.map((c) => `<code>${escapeHtml(c.field)} ${escapeHtml(c.op)} ${escapeHtml(JSON.stringify(c.value))}</code>`).join(" and ");
}

export function sharingPage(view: SharingPageView): string {
  const d = view.defaultsForm;
  const defaults = crmObjects.map((o) => selectInput(d, `default.${o}`, o, accessLevels, view.defaults[o])).join("\n  ");
  const rules =
    view.rules.length === 0
      ? `<tr><td colspan="6">No sharing rules yet.</td></tr>`
      : view.rules
          .map(
            (r) => `
    <tr data-rule-id="${r.id}" data-name="${escapeHtml(String(r.name))}"><td>${escapeHtml(String(r.object))}</td><td class="name">${escapeHtml(String(r.name))}</td>
      <td>${escapeHtml(String(r.access))}</td><td>${ref(r.share_with)}</td><td>${describeRule(r)}</td>
      <td><a href="/settings/sharing?edit=${r.id}" class="edit">Change</a> ${actionButton(`/settings/sharing/rules/${r.id}/delete`, "Delete", "delete")}</td></tr>`,
          )
          .join("");
  const v = view.ruleForm;
  const basis = inputValue(v, "basis", "owner");
  const roleOptions: [string, string][] = [["", "(choose a role)"], ...view.roles.map((r): [string, string] => [r, r])];
  const action = view.replacing === undefined ? "/settings/sharing/rules" : `/settings/sharing/rules/${view.replacing}/replace`;
  return layout(
    "Sharing",
    `
<h1>Sharing</h1>
<h2>Default access</h2>
<p class="note">Who may read or change a record beyond its owner, the owner's managers and admins (docs/crm.md, "Sharing").</p>
<form method="post" action="/settings/sharing/defaults" id="defaults-form">
  ${problemList(d)}
  ${defaults}
  <button type="submit" id="save-defaults">Save defaults</button>
</form>
<h2>Sharing rules</h2>
<table id="sharing-rules">
  <thead><tr><th>Object</th><th>Name</th><th>Access</th><th>Shared with</th><th>Records</th><th></th></tr></thead>
  <tbody>${rules}
  </tbody>
</table>
<h2>${view.replacing === undefined ? "Add a sharing rule" : `Change sharing rule ${view.replacing}`}</h2>
<p class="note">The API changes a sharing rule only by deleting it and adding another. Changing one here does both in one
transaction — if the new rule is refused, the old one stays as it was — and the rule gets a new id.</p>
${view.notice === undefined ? "" : `<p class="error" id="notice" role="alert">${escapeHtml(view.notice)}</p>`}
<form method="post" action="${action}" id="sharing-rule-form">
  ${problemList(v)}
  ${selectInput(v, "object", "Object", objectOptions, "leads")}
  ${textInput(v, "name", "Name", 'size="40"')}
  ${selectInput(v, "access", "Access", ["read", "read_write"], "read")}
  <fieldset><legend>Shared with</legend>${selectInput(v, "share_with.role", "Role", roleOptions)}${checkbox(v, "share_with.include_subordinates", "and the roles below it", false)}${errorsAt(v, "share_with")}</fieldset>
  <fieldset><legend>Which records</legend>
    <label><input type="radio" name="basis" value="owner"${basis === "owner" ? " checked" : ""}> Owned by users in a role</label>
    ${selectInput(v, "owned_by.role", "Owner's role", roleOptions)}${checkbox(v, "owned_by.include_subordinates", "and the roles below it", false)}${errorsAt(v, "owned_by")}
    <label><input type="radio" name="basis" value="criteria"${basis === "criteria" ? " checked" : ""}> Matching every criterion</label>
    ${comparisonRows(v, "criteria", criterionOps, rowCount(v, "criteria", 3, 10), "in: values separated by commas")}${errorsAt(v, "criteria")}
  </fieldset>
  ${fieldReference(view.schemas)}
  <button type="submit" id="save-sharing-rule">${view.replacing === undefined ? "Add rule" : "Replace rule"}</button>
  ${view.replacing === undefined ? "" : `<a href="/settings/sharing">Cancel</a>`}
</form>`,
    view.user,
  );
}
