/**
 * The schema registry (spec: Schema registry): versions of schemas per subject, each with an id
 * unique across the broker. Subjects are named after their topic — `<topic>-value`,
 * `<topic>-key` — so a grant on the topic covers them. One file in the data dir, replaced
 * atomically before a registration is answered:
 *
 *   <data-dir>/schemas.json   {"version": 1, "schemas": [{id, subject, version, type, schema}]}
 *
 * As in Confluent's registry: registering a schema a subject already has (the same JSON, however
 * spaced) answers that version's id and adds nothing; a new version must be compatible with the
 * subject's latest (backward, Confluent's default); ids count up from 1 and are never reused.
 */
import { join } from "node:path";
import { damagedFile, readStoredJson, writeFileAtomic } from "../../core/atomic-file.ts";
import { SvcError } from "../../core/errors.ts";
import { badRequest } from "../requests/fields.ts";
import { topicNameProblem } from "../topics/names.ts";
import { backwardIncompatibility, parseObjectSchema } from "./json-schema.ts";

export interface StoredSchema {
  id: number;
  subject: string;
  version: number;
  type: SchemaType;
  /** The text as registered. */
  schema: string;
}

/** The types the registry judges; Confluent's AVRO and PROTOBUF are refused (docs/broker.md). */
export const schemaTypes = ["json_schema"] as const;
export type SchemaType = (typeof schemaTypes)[number];

const subjectSuffixes = ["-value", "-key"];
const fileVersion = 1;

/** The topic a subject is named after; a 400 unless it is `<topic>-value` or `<topic>-key`. */
export function subjectTopic(subject: string): string {
  const suffix = subjectSuffixes.find((s) => subject.endsWith(s));
  const topic = suffix === undefined ? "" : subject.slice(0, -suffix.length);
  if (suffix === undefined || topicNameProblem(topic) !== null) {
    throw badRequest(`subject ${JSON.stringify(subject)} must be named after its topic: <topic>-value or <topic>-key, the topic a valid topic name`);
  }
  return topic;
}

export class SchemaRegistry {
  private readonly schemas: StoredSchema[] = [];
  private readonly bySubject = new Map<string, StoredSchema[]>();
  private readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, "schemas.json");
    const file = readStoredJson(this.path, fileVersion);
    if (file !== null) this.read(file);
  }

  /**
   * Registers `schema` under `subject` (already named after its topic): the id of the same
   * schema if the subject has it, else a new version's new id — if the text is an object schema
   * compatible with the latest version. Answers whether it was new.
   */
  register(subject: string, type: SchemaType, schema: string): { id: number; created: boolean } {
    const parsed = parseObjectSchema(schema);
    const canonical = JSON.stringify(parsed);
    const versions = this.bySubject.get(subject) ?? [];
    const same = versions.find((v) => JSON.stringify(JSON.parse(v.schema)) === canonical);
    if (same !== undefined) return { id: same.id, created: false };
    const latest = versions.at(-1);
    if (latest !== undefined) {
      const problem = backwardIncompatibility(JSON.parse(latest.schema), parsed);
      if (problem !== null) throw badRequest(problem);
    }
    const stored: StoredSchema = { id: (this.schemas.at(-1)?.id ?? 0) + 1, subject, version: versions.length + 1, type, schema };
    this.save([...this.schemas, stored]);
    this.add(stored);
    return { id: stored.id, created: true };
  }

  /** Every version of every subject, by id. */
  list(): StoredSchema[] {
    return [...this.schemas];
  }

  /** The schema with this id; 404 if none. */
  get(id: number): StoredSchema {
    const found = this.schemas.find((s) => s.id === id);
    if (found === undefined) throw new SvcError("not_found", `schema ${id} does not exist`);
    return found;
  }

  /** The subject's newest version; 404 if it has none. */
  latest(subject: string): StoredSchema {
    const latest = this.bySubject.get(subject)?.at(-1);
    if (latest === undefined) throw new SvcError("not_found", `subject '${subject}' has no schema`);
    return latest;
  }

  private add(stored: StoredSchema): void {
    this.schemas.push(stored);
    let versions = this.bySubject.get(stored.subject);
    if (versions === undefined) this.bySubject.set(stored.subject, (versions = []));
    versions.push(stored);
  }

  private save(schemas: StoredSchema[]): void {
    writeFileAtomic(this.path, JSON.stringify({ version: fileVersion, schemas }));
  }

  private read(file: Record<string, unknown>): void {
    if (!Array.isArray(file.schemas)) throw damagedFile(this.path, "expected schemas");
    for (const value of file.schemas as StoredSchema[]) {
      const ok =
        Number.isSafeInteger(value?.id) &&
        typeof value.subject === "string" &&
        Number.isSafeInteger(value.version) &&
        (schemaTypes as readonly string[]).includes(value.type) &&
        typeof value.schema === "string";
      if (!ok) throw damagedFile(this.path, "a schema lacks its id, subject, version, type or text");
      this.add(value);
    }
  }
}
