/**
 * The inputs of the admin pages' forms, each with the problems that belong beside it. A form is
 * shown new (defaults), filled from a stored definition (to change it), or as it was posted with
 * the API's refusal: every detail listed above the form as the API gave it, and each also under
 * the input it came from.
 */
import type { FieldError } from "../rules/record.ts";
import { escapeHtml } from "./html.ts";

export interface FormView {
  /** What the inputs hold: what was posted, or a stored definition's; null for a new form (defaults). */
  values: URLSearchParams | null;
  /** Every problem found, as the API (or the form) gave them. */
  details: FieldError[];
  /** The same problems, by the key of the input they belong beside. */
  inline: Map<string, string[]>;
}

export const newForm: FormView = { values: null, details: [], inline: new Map() };

export function inputValue(v: FormView, name: string, fallback = ""): string {
  return v.values === null ? fallback : (v.values.get(name) ?? "");
}

/** The problems that belong beside input `key`. */
export function errorsAt(v: FormView, key: string): string {
  return (v.inline.get(key) ?? []).map((m) => `<span class="field-error" data-for="${escapeHtml(key)}">${escapeHtml(m)}</span>`).join("");
}

/** Every problem, above the form: what the API answered, field by field. */
export function problemList(v: FormView): string {
  if (v.details.length === 0) return "";
  const items = v.details.map((d) => `<li><code>${escapeHtml(d.field)}</code>: ${escapeHtml(d.message)}</li>`).join("");
  return `<div class="error form-errors" role="alert"><p>Refused; nothing was changed:</p><ul>${items}</ul></div>`;
}

export function textInput(v: FormView, name: string, label: string, attrs = ""): string {
  return `<label>${escapeHtml(label)} <input name="${escapeHtml(name)}" value="${escapeHtml(inputValue(v, name))}" ${attrs}>${errorsAt(v, name)}</label>`;
}

/** A select of `options` ([value, label] or plain values); `fallback` is a new form's choice. */
export function selectInput(v: FormView, name: string, label: string, options: readonly (string | [string, string])[], fallback = ""): string {
  const current = inputValue(v, name, fallback);
  const items = options.map((o) => {
    const [value, shown] = typeof o === "string" ? [o, o] : o;
    return `<option value="${escapeHtml(value)}"${value === current ? " selected" : ""}>${escapeHtml(shown)}</option>`;
  });
  return `<label>${escapeHtml(label)} <select name="${escapeHtml(name)}">${items.join("")}</select>${errorsAt(v, name)}</label>`;
}

/** A checkbox; a new form shows `fallback`, a filled one what it holds (an unchecked box posts nothing). */
export function checkbox(v: FormView, name: string, label: string, fallback: boolean): string {
  const on = v.values === null ? fallback : v.values.has(name);
  return `<label><input type="checkbox" name="${escapeHtml(name)}"${on ? " checked" : ""}> ${escapeHtml(label)}${errorsAt(v, name)}</label>`;
}

export function textarea(v: FormView, name: string, label: string, rows: number, placeholder = ""): string {
  return `<label>${escapeHtml(label)}<textarea name="${escapeHtml(name)}" rows="${rows}" placeholder="${escapeHtml(placeholder)}">${escapeHtml(inputValue(v, name))}</textarea>${errorsAt(v, name)}</label>`;
}

/** How many rows of a row group to show: up to the last filled, one empty to add, at least `least`, at most `most`. */
export function rowCount(v: FormView, prefix: string, least: number, most: number): number {
  let shown = 0;
  for (let i = 0; i < most && v.values?.has(`${prefix}.${i}.field`); i++) {
    if (v.values.get(`${prefix}.${i}.field`)!.trim() !== "") shown = i + 1;
  }
  return Math.min(most, Math.max(least, shown + 1));
}

/** Comparison rows `prefix.N.field/op/value`, each with its problems after it. */
export function comparisonRows(v: FormView, prefix: string, ops: readonly string[], count: number, valueHint: string): string {
  let rows = "";
  for (let i = 0; i < count; i++) {
    const at = `${prefix}.${i}`;
    rows += `
    <div class="row" data-row="${escapeHtml(at)}">${textInput(v, `${at}.field`, "Field", 'size="18"')}${selectInput(v, `${at}.op`, "Op", ops, "eq")}${textInput(
      v,
      `${at}.value`,
      "Value",
      `size="24" placeholder="${escapeHtml(valueHint)}"`,
    )}${errorsAt(v, at)}</div>`;
  }
  return rows;
}

/** A post-only button (delete, revoke) in its own small form. */
export function actionButton(action: string, label: string, cls: string): string {
  return `<form class="inline" method="post" action="${escapeHtml(action)}"><button type="submit" class="${escapeHtml(cls)}">${escapeHtml(label)}</button></form>`;
}
