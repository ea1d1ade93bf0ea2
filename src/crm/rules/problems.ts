/**
 * What a rule parser collects while it walks admin-supplied JSON: every problem found, each named
 * by a path-like field (`condition.all[2].op`), so one 422 answers for the whole definition. The
 * parsers never throw on what they are given; they only add problems here. The readers of the
 * parts every definition is built from (names, texts, choices) are in definition-parts.ts.
 */
import { crmRuleProblemsMax } from "../../core/limits.ts";
import { type CrmObject, type FieldError, recordErrorField, type ValueExpr } from "./record.ts";

export interface ParseOptions {
  /**
   * The fields an object has now (standard and custom). When given, a rule that names a field the
   * object lacks is refused; buildRuleSet omits it, so a rule outlives a field later removed (the
   * field then reads as null).
   */
  fieldsOf?: (object: CrmObject) => ReadonlySet<string> | undefined;
  /**
   * Why `value`, written by a rule into `field` of `object`, could never be stored there, or null
   * when it could. `source` is the object whose record refs and templates read. The engine does
   * not know field types; when the store passes this, a rule whose write would fail every save it
   * fires on is refused when it is defined (as Salesforce checks a field update when it is saved)
   * rather than breaking those saves later.
   */
  writeProblem?: (object: CrmObject, field: string, value: ValueExpr, source: CrmObject) => string | null;
  /** The fields a new record of `object` must be given (required, without a default), for create_record. */
  requiredOf?: (object: CrmObject) => readonly string[] | undefined;
}

export class Problems {
  readonly list: FieldError[] = [];
  private dropped = 0;

  constructor(readonly options: ParseOptions = {}) {}

  add(field: string, message: string): void {
    if (this.list.length < crmRuleProblemsMax) this.list.push({ field, message });
    else this.dropped++;
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  /** The problems as a 422's details, with a last entry counting any left out. */
  details(): FieldError[] {
    if (this.dropped === 0) return this.list;
    return [...this.list, { field: recordErrorField, message: `${this.dropped} more problems not shown` }];
  }
}

/** A key of `path`; the root path is "". */
export function at(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

export function atIndex(path: string, index: number): string {
  return `${path}[${index}]`;
}
