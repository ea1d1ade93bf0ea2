/**
 * A database's refusal of a statement, as the HTTP answer it means. The checks before every write
 * (objects/values.ts, the settings parsers) are meant to refuse bad input first, with a precise
 * message; this is the net under them, so that input they miss — or a race between two requests
 * (two admins adding the same custom field on PostgreSQL) — is still a 4xx and never a 500:
 *   - a unique key or an existing column: 409 conflict;
 *   - NOT NULL, a foreign key, a CHECK, a value of the wrong type or out of range, text the
 *     database cannot hold: 422, on the column when the database names it;
 *   - a deadlock, a serialization failure or a lock held too long: 503, try again.
 * Anything else (a missing table, a syntax error) is our bug and stays a 500. Each mapped error
 * keeps the driver's error as its cause, and the server logs it: a check is missing somewhere.
 */
import { SQL } from "bun";
import { SvcError } from "../../core/errors.ts";
import { recordErrorField } from "../rules/record.ts";

/** Marks an SvcError made from a database's refusal, so the server can log what slipped past the checks. */
export const storeRefusal = Symbol("storeRefusal");

const invalid = (field: string, message: string, cause: unknown) => refusal(new SvcError("invalid", "invalid input", { details: [{ field, message }], cause }));
const conflict = (message: string, cause: unknown) => refusal(new SvcError("conflict", message, { cause }));
const retry = (cause: unknown) =>
  refusal(new SvcError("unavailable", "the database was busy with a conflicting change; try again", { headers: { "retry-after": "1" }, cause }));

function refusal(error: SvcError): SvcError {
  (error as SvcError & { [storeRefusal]?: true })[storeRefusal] = true;
  return error;
}

export const isStoreRefusal = (error: SvcError) => (error as SvcError & { [storeRefusal]?: true })[storeRefusal] === true;

/** PostgreSQL's SQLSTATE codes (Appendix A of its manual) that client input can cause. */
function fromPostgres(error: { errno?: unknown; column?: unknown; message: string }): SvcError | null {
  const state = String(error.errno ?? "");
  const field = typeof error.column === "string" ? error.column : recordErrorField;
  switch (state) {
    case "23505":
    case "42701":
      return conflict("that already exists", error);
    case "23502":
      return invalid(field, "is required", error);
    case "23503":
      return invalid(field, "names something that does not exist", error);
    case "23514":
      return invalid(field, "is not allowed here", error);
    case "22001":
      return invalid(field, "is too long", error);
    case "22003":
      return invalid(field, "is out of range", error);
    case "22021":
    case "22P05":
      return invalid(field, "has a character the database cannot store", error);
    case "40001":
    case "40P01":
    case "55P03":
      return retry(error);
  }
  // Class 22 is "data exception": a value the column cannot take.
  return state.startsWith("22") ? invalid(field, "is not a value this field can hold", error) : null;
}

/** SQLite's extended result codes, and the column a NOT NULL message names ("... failed: leads.owner_id"). */
function fromSqlite(error: { code?: unknown; message: string }): SvcError | null {
  const code = String(error.code ?? "");
  const column = /failed: \w+\.(\w+)/.exec(error.message)?.[1] ?? recordErrorField;
  switch (code) {
    case "SQLITE_CONSTRAINT_UNIQUE":
    case "SQLITE_CONSTRAINT_PRIMARYKEY":
      return conflict("that already exists", error);
    case "SQLITE_CONSTRAINT_NOTNULL":
      return invalid(column, "is required", error);
    case "SQLITE_CONSTRAINT_FOREIGNKEY":
      return invalid(recordErrorField, "names something that does not exist", error);
    case "SQLITE_CONSTRAINT_CHECK":
      return invalid(column, "is not allowed here", error);
    case "SQLITE_TOOBIG":
      return invalid(recordErrorField, "is too large for the database", error);
    case "SQLITE_MISMATCH":
      return invalid(recordErrorField, "is not a value this field can hold", error);
    case "SQLITE_BUSY":
    case "SQLITE_BUSY_TIMEOUT":
    case "SQLITE_LOCKED":
      return retry(error);
  }
  return null;
}

/** `error` as the 4xx (or 503) it means when a database refused client input; otherwise `error` itself. */
export function fromStoreError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const mapped = error instanceof SQL.PostgresError ? fromPostgres(error) : error.name === "SQLiteError" ? fromSqlite(error) : null;
  return mapped ?? error;
}
