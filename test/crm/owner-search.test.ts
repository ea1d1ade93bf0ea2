// PostgreSQL asks its owner-keyed search index once per owner when a user sees the records of few
// owners (records/owner-search.ts). In the world here alice and bob (sales reps) see only their
// own leads, one owner of four users, so their searches from all the matches (--search-newest-rows
// 1) take that path; the manager sees three owners and the admin everyone, so theirs take the
// trigram index. The answers must be the same records either way, counted exactly, with
// updated_since, with terms too short for the index, and after a record changes owner.
import { beforeAll, describe, expect, test } from "bun:test";
import { searchesPerOwner } from "../../src/crm/records/owner-search.ts";
import { crmSearchOwnerShareMax } from "../../src/core/limits.ts";
import { postgresBackend, type World, worldForSuite } from "./support/crm.ts";

interface Listed {
  data: { id: number; last_name: string; owner_id: number }[];
  total: number;
  total_exact: boolean;
}

describe("which searches ask per owner", () => {
  test("while the owners are at most one in crmSearchOwnerShareMax of the users, and a term has three characters", () => {
    const users = 4 * crmSearchOwnerShareMax;
    expect(searchesPerOwner([1, 2, 3, 4], users, ["kestrel"])).toBe(true);
    expect(searchesPerOwner([1, 2, 3, 4, 5], users, ["kestrel"])).toBe(false);
    expect(searchesPerOwner([1], users, ["ke", "st"])).toBe(false);
    expect(searchesPerOwner([1], users, ["ke", "str"])).toBe(true);
    // Three characters, not bytes: "žžž" has a window, "žž" (four bytes) none.
    expect(searchesPerOwner([1], users, ["žžž"])).toBe(true);
    expect(searchesPerOwner([1], users, ["žž"])).toBe(false);
  });
});

describe("searches per owner on postgres", () => {
  let w: World;
  worldForSuite(
    postgresBackend(),
    (made) => {
      w = made;
    },
    ["--search-newest-rows", "1"],
  );
  const made = new Map<string, number[]>();
  const create = async (token: string, lastName: string) => {
    const r = await w.crm.call(token, "POST", "/api/v1/leads", { last_name: lastName, company: "Žluťoučký Kůň" });
    expect(r.status).toBe(201);
    return r.body.id as number;
  };
  beforeAll(async () => {
    expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
    for (const [who, token] of [
      ["alice", w.alice],
      ["bob", w.bob],
      ["manager", w.manager],
    ] as const) {
      const ids: number[] = [];
      for (let i = 0; i < 4; i++) ids.push(await create(token, `Kestrel ${who} k${i}`));
      made.set(who, ids);
    }
  }, 60_000);

  const search = async (token: string, query: Record<string, string>): Promise<Listed> => {
    const r = await w.crm.call(token, "GET", `/api/v1/leads?${new URLSearchParams({ per: "100", ...query })}`);
    expect(r.status, JSON.stringify(query)).toBe(200);
    return r.body;
  };
  const ids = (l: Listed) => l.data.map((r) => r.id);
  const newestFirst = (list: number[]) => [...list].sort((a, b) => b - a);

  test("each rep finds their own matches only, newest first, counted exactly; the manager and admin theirs", async () => {
    const alice = await search(w.alice, { q: "kestrel" });
    expect([ids(alice), alice.total, alice.total_exact]).toEqual([newestFirst(made.get("alice")!), 4, true]);
    expect(ids(await search(w.bob, { q: "kestrel bob" }))).toEqual(newestFirst(made.get("bob")!));
    expect((await search(w.alice, { q: "kestrel bob" })).total).toBe(0);
    // Letters past ASCII: windows of characters, not bytes.
    expect((await search(w.alice, { q: "žluťoučký kůň" })).total).toBe(4);
    expect((await search(w.manager, { q: "kestrel" })).total).toBe(12);
    expect((await search(w.admin, { q: "kestrel" })).total).toBe(12);
  });

  test("a term too short for the index is checked on each row beside one that is not", async () => {
    expect(ids(await search(w.alice, { q: "kestrel k2" }))).toEqual([made.get("alice")![2]!]);
    expect(ids(await search(w.alice, { q: "k3 alice" }))).toEqual([made.get("alice")![3]!]);
    expect((await search(w.alice, { q: "k9 alice" })).total).toBe(0);
  });

  test("updated_since narrows a rep's matches", async () => {
    const before = new Date().toISOString();
    await Bun.sleep(5);
    const edited = made.get("alice")!.slice(0, 2);
    for (const id of edited) expect((await w.crm.call(w.alice, "PATCH", `/api/v1/leads/${id}`, { rating: "Hot" })).status).toBe(200);
    const since = await search(w.alice, { q: "kestrel", updated_since: before });
    expect([ids(since), since.total]).toEqual([newestFirst(edited), 2]);
  });

  test("a record given to another owner leaves the old owner's searches and joins the new one's", async () => {
    const given = made.get("alice")![1]!;
    expect((await w.crm.call(w.admin, "PATCH", `/api/v1/leads/${given}`, { owner_id: w.ids.bob })).status).toBe(200);
    expect(ids(await search(w.alice, { q: "kestrel" }))).not.toContain(given);
    expect((await search(w.alice, { q: "kestrel" })).total).toBe(3);
    const bob = await search(w.bob, { q: "kestrel" });
    expect([bob.total, ids(bob).includes(given)]).toEqual([5, true]);
    expect((await search(w.bob, { q: "kestrel alice" })).data.map((r) => r.owner_id)).toEqual([w.ids.bob]);
  });
});
