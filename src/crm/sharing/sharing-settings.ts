/**
 * What an object's sharing settings are: its default access (Salesforce's organization-wide
 * default) and the shape of a sharing rule. Kept apart from sharing-rules.ts (which reads and
 * writes them) so that the access predicate and the materialized rows can name them without
 * importing the module that rebuilds those rows.
 */
import type { CrmObject } from "../rules/record.ts";
import type { Criterion } from "./criteria.ts";

export const accessLevels = ["private", "read", "read_write"] as const;
export type DefaultAccess = (typeof accessLevels)[number];

/**
 * An object's default access when no admin has set one: Salesforce's default for new orgs,
 * Public Read/Write (docs/crm.md). Admins tighten it per object.
 */
export const defaultAccessDefault: DefaultAccess = "read_write";

export interface SharingRule {
  id: number;
  object: CrmObject;
  name: string;
  access: "read" | "read_write";
  targetRoleId: number;
  targetSubordinates: boolean;
  /** Owner-based: the role whose users' records are shared. */
  ownerRoleId: number | null;
  ownerSubordinates: boolean;
  /** Criteria-based: the conditions a record must meet. */
  criteria: Criterion[] | null;
}
