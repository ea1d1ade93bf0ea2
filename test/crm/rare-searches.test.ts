// A search whose page was not among the user's newest records goes to its matches at once the
// next time (records/record-store.ts, rareSearches): the page is the same either way, and the
// count exact on that path. Once its matches outnumber --search-newest-rows it is looked for among
// the newest records again. Seen from outside by total_exact: a page found among the newest
// records says "at least" (false), one chosen from all the matches is counted exactly (true).
import { beforeAll, describe, expect, test } from "bun:test";
import { type Backend, postgresBackend, sqliteBackend, type World, worldForSuite } from "./support/crm.ts";

const newestRows = 6;

interface Listed {
  data: { id: number }[];
  total: number;
  total_exact: boolean;
}

function suite(backend: Backend): void {
  describe(`rare searches on ${backend.name}`, () => {
    let w: World;
    worldForSuite(
      backend,
      (made) => {
        w = made;
      },
      ["--search-newest-rows", String(newestRows)],
    );
    const zebras: number[] = [];
    const create = async (lastName: string) => {
      const r = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: lastName, company: "Acme" });
      expect(r.status).toBe(201);
      return r.body.id as number;
    };
    beforeAll(async () => {
      expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
      // Three zebras, then more leads than --search-newest-rows: alice's newest hold no zebra.
      for (let i = 0; i < 3; i++) zebras.unshift(await create("Zebra"));
      for (let i = 0; i < newestRows + 4; i++) await create("Okapi");
    }, 60_000);

    const search = async (query: string): Promise<Listed> => {
      const r = await w.crm.call(w.alice, "GET", `/api/v1/leads?${query}`);
      expect(r.status).toBe(200);
      return r.body;
    };
    const shape = (l: Listed) => [l.data.map((r) => r.id), l.total, l.total_exact];

    test("a rare search is answered from its matches, and again when it is no longer rare, until its matches outnumber the newest records", async () => {
      // Not among the newest: chosen from all the matches, counted exactly.
      expect(shape(await search("q=zebra&per=2"))).toEqual([zebras.slice(0, 2), 3, true]);
      expect(shape(await search("q=zebra&per=2"))).toEqual([zebras.slice(0, 2), 3, true]);
      // Ten new zebras: the first page is now among alice's newest records, but the search is
      // remembered as rare and goes to its matches: the same page, counted exactly.
      for (let i = 0; i < 10; i++) zebras.unshift(await create("Zebra"));
      expect(shape(await search("q=zebra&per=2"))).toEqual([zebras.slice(0, 2), 13, true]);
      // 13 matches are more than the newest records it looks among: it is looked for there again,
      // found, and its total says "at least".
      expect(shape(await search("q=zebra&per=2"))).toEqual([zebras.slice(0, 2), 3, false]);
      // A page needing fewer matches than one that failed still looks among the newest records.
      expect(shape(await search("q=zebra&per=20"))).toEqual([zebras, 13, true]);
      expect(shape(await search("q=zebra&per=1"))).toEqual([zebras.slice(0, 1), 2, false]);
    });
  });
}

suite(sqliteBackend());
suite(postgresBackend());
