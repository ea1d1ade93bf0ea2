/**
 * Topic names (spec: letters, digits, `.`, `-`, `_`; up to 200 characters). A name is also a
 * directory name under the data dir, so `.` and `..` are refused as Kafka refuses them: they are
 * made only of allowed characters but name the directory itself or its parent.
 */
import { SvcError } from "../../core/errors.ts";
import { topicNameLengthMax } from "../../core/limits.ts";

const allowed = /^[A-Za-z0-9._-]+$/;

/**
 * The reason `name` is not a valid topic name, or null when it is; `where` names it in the
 * message. Consumer group names follow the same rule (they are path segments and file keys too).
 */
export function topicNameProblem(name: unknown, where = "'name'"): string | null {
  if (typeof name !== "string") return `${where} must be a string, not ${name === null ? "null" : typeof name}`;
  if (name.length === 0) return `${where} must not be empty`;
  if (name.length > topicNameLengthMax) return `${where} has ${name.length} characters; the limit is ${topicNameLengthMax}`;
  if (!allowed.test(name)) return `${where} ${JSON.stringify(name)} may hold only letters, digits, '.', '-' and '_'`;
  if (name === "." || name === "..") return `${where} must not be '${name}'`;
  return null;
}

export function checkTopicName(name: unknown, where = "'name'"): string {
  const problem = topicNameProblem(name, where);
  if (problem !== null) throw new SvcError("bad_request", problem);
  return name as string;
}
