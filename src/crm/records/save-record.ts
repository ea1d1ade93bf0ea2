/**
 * The one place a record save enters the rules engine (Salesforce's order of execution:
 * rules/save.ts). An InvalidRecord from either side becomes the spec's 422
 * `{"error":"invalid","details":[...]}`; thrown out of the request's transaction, it rolls back
 * every write the save made.
 */
import { SvcError } from "../../core/errors.ts";
import { InvalidRecord, type RecordData, type SaveHost, type SaveRequest } from "../rules/contract.ts";
import { save } from "../rules/save.ts";

export async function saveRecord(host: SaveHost, request: SaveRequest): Promise<RecordData> {
  try {
    return await save(host, request);
  } catch (error) {
    if (error instanceof InvalidRecord) throw new SvcError("invalid", "invalid record", { details: error.details, cause: error });
    throw error;
  }
}
