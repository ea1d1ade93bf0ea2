/**
 * Grants (spec: Authentication, "Grants"): rules `{action, topic_prefix}` a key holds, and whether
 * one covers an action on a topic.
 *
 * Prefixes are separator-aware: `orders` covers `orders` and the names below it that continue
 * with a separator (`orders.eu`, `orders-archive`, `orders_2024`), not `ordersecret`; a prefix that
 * ends in a separator (`orders.`) covers every name that starts with it; `*` covers every topic.
 *
 * Actions nest: `write` includes `read` (the spec), and `admin` includes both — a key that may
 * delete and reconfigure a topic may also read and write it, as Kafka's `All` operation does. Admin
 * on `*` is the global admin: keys, producers, the retention and compaction passes, any group.
 */
import { topicNameLengthMax } from "../../core/limits.ts";
import { badRequest, describeJson, objectFields } from "../requests/fields.ts";
import type { Action } from "./authorizer.ts";

export interface Grant {
  action: Action;
  topic_prefix: string;
}

/** The prefix that covers every topic. */
export const everyTopic = "*";
/** The most grants one key holds: a key's grants are scanned on every request. */
export const grantsPerKeyMax = 100;

const separators = ".-_";
const prefixCharacters = /^[A-Za-z0-9._-]+$/;
const actionRank: Record<Action, number> = { read: 0, write: 1, admin: 2 };
const actions = Object.keys(actionRank) as Action[];

/** Whether a grant of `granted` allows `wanted` (admin ⊇ write ⊇ read). */
export function actionCovers(granted: Action, wanted: Action): boolean {
  return actionRank[granted] >= actionRank[wanted];
}

/** Whether `prefix` covers the topic `topic` (separator-aware; see the module comment). */
export function prefixCovers(prefix: string, topic: string): boolean {
  if (prefix === everyTopic) return true;
  if (!topic.startsWith(prefix)) return false;
  if (topic.length === prefix.length) return true;
  return separators.includes(prefix[prefix.length - 1]!) || separators.includes(topic[prefix.length]!);
}

/** Whether any of `grants` allows `action` on `topic`. */
export function grantsAllow(grants: readonly Grant[], action: Action, topic: string): boolean {
  return grants.some((g) => actionCovers(g.action, action) && prefixCovers(g.topic_prefix, topic));
}

/** Whether `grants` include admin on `*`. */
export function isGlobalAdminGrants(grants: readonly Grant[]): boolean {
  return grants.some((g) => g.action === "admin" && g.topic_prefix === everyTopic);
}

/** A key's grants as a request gives them (the `acls` field), checked whole: a 400 names the first bad one. */
export function parseGrants(value: unknown): Grant[] {
  if (!Array.isArray(value)) throw badRequest(`'acls' must be an array of {action, topic_prefix}, not ${describeJson(value)}`);
  if (value.length > grantsPerKeyMax) throw badRequest(`'acls' has ${value.length} rules; a key holds at most ${grantsPerKeyMax}`);
  return value.map((rule, i) => {
    const where = `acls[${i}]`;
    const fields = objectFields(rule, ["action", "topic_prefix"], `'${where}'`);
    if (typeof fields.action !== "string" || !(actions as string[]).includes(fields.action)) {
      throw badRequest(`'${where}.action' must be read, write or admin, not ${JSON.stringify(fields.action ?? null)}`);
    }
    return { action: fields.action as Action, topic_prefix: checkPrefix(fields.topic_prefix, `${where}.topic_prefix`) };
  });
}

function checkPrefix(value: unknown, where: string): string {
  if (typeof value !== "string") throw badRequest(`'${where}' must be a string, not ${describeJson(value ?? null)}`);
  if (value === "") throw badRequest(`'${where}' must not be empty: use "*" for every topic`);
  if (value === everyTopic) return value;
  if (value.includes("*")) throw badRequest(`'${where}' ${JSON.stringify(value)}: '*' stands alone (every topic); a prefix matches names by their start`);
  if (value.length > topicNameLengthMax) throw badRequest(`'${where}' has ${value.length} characters; a topic name has at most ${topicNameLengthMax}`);
  if (!prefixCharacters.test(value)) throw badRequest(`'${where}' ${JSON.stringify(value)} may hold only letters, digits, '.', '-' and '_', as topic names do`);
  return value;
}
