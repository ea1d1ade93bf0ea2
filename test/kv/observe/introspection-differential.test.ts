// Introspection against redis-server 7.0.15 by generated sequences on three clients (two RESP2,
// one RESP3; test/kv/support/families/introspection.ts, which says what is normalised and why):
// CLIENT's subcommands (names, ids, LIST and INFO, KILL in every form, NO-EVICT, UNPAUSE, UNBLOCK
// of a client blocked in BLPOP), INFO's sections by field, COMMAND's subcommands, OBJECT, DEBUG,
// MEMORY USAGE; then every client's CLIENT LIST line and the keyspace compared.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, step as s } from "../support/duet.ts";
import { options, steps } from "../support/families/introspection.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 200;

describe("introspection against redis-server, generated", () => {
  test(
    "CLIENT, INFO, COMMAND, OBJECT, DEBUG and MEMORY sequences give the same replies and leave the same clients",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("discrepancies the generated runs found, kept as cases", () => {
  test("CLIENT LIST's cmd names what a refused command was looked up as, and a failed transaction queues nothing more", async () => {
    await expectSameDuet(
      servers,
      [
        s("A", "CLIENT"),
        s("C", "CLIENT", "LIST"),
        s("A", "CLIENT", "GETNAME", "x"),
        s("C", "CLIENT", "LIST"),
        s("A", "NOSUCH"),
        s("C", "CLIENT", "LIST"),
        s("A", "CLIENT", "NOSUCH"),
        s("C", "CLIENT", "LIST"),
        // multi= counts what is kept: nothing once a command was refused, or a watched key changed.
        s("B", "MULTI"),
        s("B", "GET", "k"),
        s("B", "CLIENT", "GETNAME", "x"),
        s("B", "SET", "k", "v"),
        s("C", "CLIENT", "LIST"),
        s("B", "EXEC"),
        s("B", "WATCH", "w"),
        s("A", "SET", "w", "1"),
        s("B", "MULTI"),
        s("B", "GET", "w"),
        s("C", "CLIENT", "LIST"),
        s("B", "EXEC"),
      ],
      options,
    );
  });
  test("a client running EXEC is still in MULTI to CLIENT LIST and INFO until its queue has run", async () => {
    await expectSameDuet(
      servers,
      [
        s("C", "MULTI"),
        s("C", "CLIENT", "INFO"),
        s("C", "BLPOP", "empty", "0"),
        s("C", "CLIENT", "LIST", "ID", "<id:C>"),
        s("C", "EXEC"),
        s("C", "CLIENT", "INFO"),
      ],
      options,
    );
  });
  test("CLIENT UNBLOCK checks its reason before its id", async () => {
    await expectSameDuet(
      servers,
      [s("A", "CLIENT", "UNBLOCK", "abc", "BAD"), s("A", "CLIENT", "UNBLOCK", "abc", "ERROR"), s("A", "CLIENT", "UNBLOCK", "<id:B>", "maybe")],
      options,
    );
  });
  test("COMMAND INFO's flags, categories, tips and no subcommands are RESP3 sets, and COMMAND DOCS is a map", async () => {
    await expectSameDuet(
      servers,
      [s("B", "COMMAND", "INFO", "get", "client"), s("B", "COMMAND", "DOCS", "nosuch"), s("A", "COMMAND", "DOCS", "nosuch")],
      options,
    );
  });
});
