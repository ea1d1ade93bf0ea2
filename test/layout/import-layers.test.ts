/**
 * Imports run one way. Across src/ no import circle has more than two files (a pair that names
 * each other's types is allowed: kit/spec.ts and kit/server.ts describe one another). Inside kv
 * the layers, from the bottom: text/ (Redis's words) → types/ (data structures) → keyspace/ →
 * ACL, config, the observers, clients' state → the command context (kit/spec.ts, kit/server.ts)
 * → kit/'s helpers → commands/ → server/command-table.ts → server/engine.ts → resp/, rest/,
 * service.ts. docs/kv.md ("Layout") describes each folder.
 */
import { describe, expect, test } from "bun:test";
import { join, relative } from "node:path";
import { describeCircle, importCircles, importGraph, typeScriptFiles } from "../support/import-graph.ts";

const root = join(import.meta.dir, "../..");
const graph = importGraph(typeScriptFiles(join(root, "src")));
const kv = (file: string) => relative(join(root, "src/kv"), file);
const inKv = (file: string) => !kv(file).startsWith("..");

/** Every import from one kv module to another, as paths relative to src/kv. */
const kvEdges: [from: string, to: string][] = [...graph].flatMap(([from, targets]) =>
  inKv(from) ? targets.filter(inKv).map((to): [string, string] => [kv(from), kv(to)]) : [],
);

/** The edges that break a rule: `from` matches and `to` is not allowed for it. */
const breaking = (from: (f: string) => boolean, allowed: (to: string, from: string) => boolean) =>
  kvEdges.filter(([f, t]) => from(f) && !allowed(t, f)).map(([f, t]) => `${f} → ${t}`);

const under =
  (...folders: string[]) =>
  (file: string) =>
    folders.some((folder) => file.startsWith(`${folder}/`));

test("no import circle in src/ has more than two files", () => {
  expect(graph.size).toBeGreaterThan(300);
  const long = importCircles(graph).filter((circle) => circle.length > 2);
  expect(long.map((circle) => describeCircle(circle, root))).toEqual([]);
});

describe("kv's layers import one way", () => {
  test("text/ imports only text/, and types/ only types/ and text/", () => {
    expect(kvEdges.length).toBeGreaterThan(500);
    expect(breaking(under("text"), under("text"))).toEqual([]);
    expect(breaking(under("types"), under("types", "text"))).toEqual([]);
  });

  test("keyspace/ imports only the data structures and words below it", () => {
    expect(breaking(under("keyspace"), under("keyspace", "types", "text"))).toEqual([]);
  });

  test("below the command context nothing imports it: ACL, config, RDB and the layers under them hold no command code", () => {
    const context = (to: string) => to === "kit/spec.ts" || to === "kit/server.ts";
    expect(breaking(under("text", "types", "keyspace", "acl", "config", "rdb"), (to) => !context(to))).toEqual([]);
  });

  test("commands are imported only by commands and by the server that tables and runs them", () => {
    expect(
      breaking(
        (f) => !f.startsWith("commands/"),
        (to, from) => !to.startsWith("commands/") || from.startsWith("server/"),
      ),
    ).toEqual([]);
  });

  test("only what runs commands imports the command table, and only the protocols, the service and the cron import the engine", () => {
    // The engine, its read-ahead of a batch's keys (warm.ts) and the protocols' fronts look
    // commands up in the table; everything below them is handed what it needs.
    const tableUsers = (from: string) => from === "server/engine.ts" || from === "server/warm.ts" || from.startsWith("resp/") || from.startsWith("rest/");
    expect(
      breaking(
        () => true,
        (to, from) => to !== "server/command-table.ts" || tableUsers(from),
      ),
    ).toEqual([]);
    const engineUsers = (from: string) => from.startsWith("resp/") || from.startsWith("rest/") || from === "service.ts" || from === "server/cron.ts";
    expect(
      breaking(
        () => true,
        (to, from) => to !== "server/engine.ts" || engineUsers(from),
      ),
    ).toEqual([]);
  });
});
