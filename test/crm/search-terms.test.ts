// `q`'s terms are plain substrings of a record's name-like fields, whatever characters they hold
// (docs/crm.md, "List"). Searches here go to all of a term's matches (--search-newest-rows 1), the
// path where PostgreSQL asks its trigram index for a term's words and checks the term itself on
// each row (records/search.ts, postgresTermMatch), and where it decides on that row whether the
// user may see it. Checked against a model built from each user's plain list, on SQLite and
// PostgreSQL.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type Backend, postgresBackend, sqliteBackend, type World, worldForSuite } from "./support/crm.ts";

interface Lead {
  id: number;
  first_name: string | null;
  last_name: string;
  company: string | null;
  email: string | null;
}

interface Listed {
  data: Lead[];
  total: number;
  total_exact: boolean;
}

/** Names with the characters a term may hold: dots, at signs, hyphens, apostrophes, LIKE's own, letters past ASCII. */
const people: Omit<Lead, "id">[] = [
  { first_name: "Ivy", last_name: "Novak", company: "Tail-Spin Toys", email: "ivy.novak@tailspin.example" },
  { first_name: "Ivy", last_name: "Novak-Ray", company: "Ivy Novak Studio", email: "ivy-novak@studio.example" },
  { first_name: "Novak", last_name: "Ivy", company: "A.B. Corp", email: "novak.ivy@ab.example" },
  { first_name: "Sean", last_name: "O'Neil", company: "100% Pure", email: "sean_oneil@pure.example" },
  { first_name: "Zoë", last_name: "Ålund", company: "Snake_Case Ltd", email: "zoe.alund@snake.example" },
  { first_name: "Ann", last_name: "Smith", company: "Smith & Sons", email: "ann.smith@sons.example" },
  { first_name: "Annabel", last_name: "Smithers", company: "Ivy.Novak Ltd", email: "a.smithers@ivy.example" },
  { first_name: "Jo", last_name: "Ng", company: "X.Y.Z.", email: "jo@x.y.z.example" },
];

/** What `search_text` holds for a lead: its name-like fields, lower-cased (objects/values.ts). */
const searchText = (l: Omit<Lead, "id">) =>
  [l.first_name, l.last_name, l.company, l.email]
    .filter((v) => v !== null && v !== "")
    .join(" ")
    .toLowerCase();

function suite(backend: Backend): void {
  describe(`search terms on ${backend.name}`, () => {
    let w: World;
    worldForSuite(
      backend,
      (made) => {
        w = made;
      },
      ["--search-newest-rows", "1"],
    );
    beforeAll(async () => {
      expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
      // Alice owns every person twice over and bob once, so a rep's matches are not everyone's.
      for (const [i, person] of [...people, ...people, ...people].entries()) {
        const r = await w.crm.call(i % 3 === 2 ? w.bob : w.alice, "POST", "/api/v1/leads", person);
        expect(r.status).toBe(201);
      }
    }, 60_000);

    const list = async (token: string, query: string): Promise<Listed> => {
      const r = await w.crm.call(token, "GET", `/api/v1/leads?${query}`);
      expect(r.status, query).toBe(200);
      return r.body;
    };
    const search = (token: string, q: string) => list(token, new URLSearchParams({ q, per: "100" }).toString());

    test("a term with a dot matches that exact text, not its words elsewhere or in another order", async () => {
      const emails = async (q: string) => [...new Set((await search(w.admin, q)).data.map((l) => l.email))].sort();
      // In Ivy Novak's email, and in Annabel's company (Ivy.Novak Ltd); not in ivy-novak@ or "novak.ivy".
      expect(await emails("ivy.novak")).toEqual(["a.smithers@ivy.example", "ivy.novak@tailspin.example"]);
      expect((await search(w.admin, "ivy.novak")).total).toBe(6);
      expect(await emails("ivy.novak@tail")).toEqual(["ivy.novak@tailspin.example"]);
      expect(await emails("novak.ivy")).toEqual(["novak.ivy@ab.example"]);
      expect(await emails("ivy.novak ltd")).toEqual(["a.smithers@ivy.example"]);
      expect((await search(w.admin, "x.y.z.")).total).toBe(3);
      expect((await search(w.admin, "o'neil")).total).toBe(3);
      expect((await search(w.admin, "100%")).total).toBe(3);
      expect((await search(w.admin, "snake_case")).total).toBe(3);
      expect((await search(w.admin, "zoë")).total).toBe(3);
      // `_` and `%` are not wildcards: "sean_o" is in the email, "sean%o" and "s_an" nowhere.
      expect((await search(w.admin, "sean_o")).total).toBe(3);
      expect((await search(w.admin, "sean%o")).total).toBe(0);
      expect((await search(w.admin, "s_an")).total).toBe(0);
    });

    test("every term's matches are the model's, as each user sees them, and counted exactly", async () => {
      const users = [w.alice, w.bob, w.manager, w.admin];
      const visible = await Promise.all(users.map(async (token) => (await list(token, "per=100")).data));
      expect(visible.map((v) => v.length)).toEqual([16, 8, 24, 24]);
      const texts = people.map(searchText);
      // Pieces of the records' own text (with whatever punctuation they cross), and strings of punctuation and letters.
      const piece = fc.tuple(fc.integer({ min: 0, max: texts.length - 1 }), fc.nat(), fc.integer({ min: 1, max: 14 })).map(([which, at, length]) => {
        const text = texts[which]!;
        const from = at % text.length;
        return text.slice(from, from + length);
      });
      const punctuated = fc.string({ unit: fc.constantFrom(..."ivynoak.@-_%'&ö "), minLength: 1, maxLength: 8 });
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: users.length - 1 }),
          fc.array(fc.oneof(piece, punctuated), { minLength: 1, maxLength: 3 }),
          async (who, parts) => {
            // At most 8 terms, as q allows.
            const terms = parts.join(" ").toLowerCase().split(/\s+/).filter(Boolean).slice(0, 8);
            fc.pre(terms.length > 0);
            const got = await search(users[who]!, terms.join(" "));
            const expected = visible[who]!.filter((l) => terms.every((t) => searchText(l).includes(t)));
            expect(got.data.map((l) => l.id)).toEqual(expected.map((l) => l.id));
            if (got.total_exact) expect(got.total).toBe(expected.length);
            else expect(got.total).toBeLessThanOrEqual(expected.length);
          },
        ),
        { numRuns: 150 },
      );
    });
  });
}

suite(sqliteBackend());
suite(postgresBackend());
