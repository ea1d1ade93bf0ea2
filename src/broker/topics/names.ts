/**
 * Topic names (spec: letters, digits, `.`, `-`, `_`; up to 200 characters). A name is also a
 * directory name under the data dir, so `.` and `..` are refused as Kafka refuses them: they are
 * made only of allowed characters but name the directory itself or its parent.
 */
import { SvcError } from "../../core/errors.ts";
import { topicNameLengthMax } from "../../core/limits.ts";

const allowed = /^[A-Za-z0-9._-]+$/;

/** The reason `name` is not a valid topic name, or null when it is. */
export function topicNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return `'name' must be a string, not ${name === null ? "null" : typeof name}`;
  if (name.length === 0) return "'name' must not be empty";
  if (name.length > topicNameLengthMax) return `'name' has ${name.length} characters; the limit is ${topicNameLengthMax}`;
  if (!allowed.test(name)) return `'name' ${JSON.stringify(name)} may hold only letters, digits, '.', '-' and '_'`;
  if (name === "." || name === "..") return `'name' must not be '${name}'`;
  return null;
}

export function checkTopicName(name: unknown): string {
  const problem = topicNameProblem(name);
  if (problem !== null) throw new SvcError("bad_request", problem);
  return name as string;
}
