/**
 * Server state: GET /info (INFO, as an object of sections) and GET /dbsize (DBSIZE).
 */
import type { Json } from "../json-reply.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

/** A number as INFO writes one: no leading zeros ("00000000" is a git hash, not 0). */
const number = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** "keys=1,expires=0,avg_ttl=0": the key=value lists of the keyspace and commandstats sections. */
const pairList = /^[a-z_]+=[^,]*(,[a-z_]+=[^,]*)*$/;
/** Identifiers that may happen to be all digits: always text. */
const identifierFields = new Set(["redis_git_sha1", "redis_build_id", "run_id", "master_replid", "master_replid2"]);

/** A field's value: numbers as numbers, key=value lists as objects, anything else as text. */
function fieldValue(text: string): Json {
  if (number.test(text) && Number.isSafeInteger(Math.trunc(Number(text)))) return Number(text);
  if (!pairList.test(text)) return text;
  return Object.fromEntries(
    text.split(",").map((pair) => {
      const at = pair.indexOf("=");
      return [pair.slice(0, at), fieldValue(pair.slice(at + 1))];
    }),
  );
}

/** INFO's "# Section\r\nfield:value\r\n…" text as {"section": {"field": value}} with lower-case section names. */
export function infoSections(text: string): { [section: string]: { [field: string]: Json } } {
  const sections: { [section: string]: { [field: string]: Json } } = {};
  let current: { [field: string]: Json } | undefined;
  for (const line of text.split("\r\n")) {
    if (line.startsWith("# ")) sections[line.slice(2).toLowerCase()] = current = {};
    else if (current !== undefined && line.includes(":")) {
      const at = line.indexOf(":");
      const name = line.slice(0, at);
      current[name] = identifierFields.has(name) ? line.slice(at + 1) : fieldValue(line.slice(at + 1));
    }
  }
  return sections;
}

export const serverRoutes: RestRoutes = {
  // ?section=all (or any INFO section name) picks sections as INFO's argument does.
  "/info": {
    GET(r) {
      const section = r.query("section");
      return runAndAnswer(r, section === undefined ? ["INFO"] : ["INFO", section], (text) => infoSections(text as string));
    },
  },
  "/dbsize": { GET: (r) => runAndAnswer(r, ["DBSIZE"]) },
};
