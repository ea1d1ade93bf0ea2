/**
 * Generated CRM records for the crm benchmark: deterministic (a seeded PRNG), with names drawn from
 * small vocabularies so a search term matches a known slice of the rows — "smith" a last name in
 * one of fifty, "renewal" an opportunity kind in one of six — as names repeat in a real CRM.
 * Rows are created oldest first over the last two years, as records accumulate, so "newest first"
 * walks the creation order.
 *
 * Each row is the object's standard columns (objects/fields.ts, id left to the database) plus
 * search_text, computed with the service's own searchText so `q` finds exactly what it would had
 * the rows come through the API.
 */
import { leadStatuses, opportunityStages, standardFields } from "../../src/crm/objects/fields.ts";
import { makeSchema } from "../../src/crm/objects/schema.ts";
import { searchText } from "../../src/crm/objects/values.ts";
import type { CrmObject, RecordData } from "../../src/crm/rules/contract.ts";

/** How far back the oldest generated record was created. */
const historyDays = 730;
const msPerDay = 86_400_000;

const firstNames = [
  "Ann",
  "Anna",
  "Joanna",
  "Annabel",
  "John",
  "Maria",
  "David",
  "Laura",
  "James",
  "Sofia",
  "Robert",
  "Emma",
  "Michael",
  "Olivia",
  "William",
  "Mia",
  "Thomas",
  "Chloe",
  "Daniel",
  "Grace",
  "Peter",
  "Lucia",
  "Henry",
  "Nora",
  "Samuel",
  "Ella",
  "Oscar",
  "Ivy",
  "Victor",
  "Zoe",
  "Hugo",
  "Lena",
  "Felix",
  "Clara",
  "Adam",
  "Rosa",
  "Leo",
  "Ines",
  "Max",
  "Alma",
];
const lastNames = [
  "Smith",
  "Johnson",
  "Garcia",
  "Miller",
  "Davis",
  "Rodriguez",
  "Martinez",
  "Hernandez",
  "Lopez",
  "Gonzalez",
  "Wilson",
  "Anderson",
  "Thomas",
  "Taylor",
  "Moore",
  "Jackson",
  "Martin",
  "Lee",
  "Perez",
  "Thompson",
  "White",
  "Harris",
  "Sanchez",
  "Clark",
  "Ramirez",
  "Lewis",
  "Robinson",
  "Walker",
  "Young",
  "Allen",
  "King",
  "Wright",
  "Scott",
  "Torres",
  "Nguyen",
  "Hill",
  "Flores",
  "Green",
  "Adams",
  "Nelson",
  "Baker",
  "Hall",
  "Rivera",
  "Campbell",
  "Mitchell",
  "Carter",
  "Roberts",
  "Novak",
  "Weber",
  "Berg",
];
const companyWords = [
  "Acme",
  "Globex",
  "Initech",
  "Umbrella",
  "Stark",
  "Wayne",
  "Wonka",
  "Tyrell",
  "Cyberdyne",
  "Soylent",
  "Hooli",
  "Vandelay",
  "Zenith",
  "Aperture",
  "Oscorp",
  "Gringotts",
  "Monarch",
  "Nakatomi",
  "Pied Piper",
  "Massive",
  "Dunder",
  "Sterling",
  "Prestige",
  "Vortex",
  "Northwind",
  "Contoso",
  "Fabrikam",
  "Tailspin",
  "Litware",
  "Proseware",
  "Adatum",
  "Blue Yonder",
  "Wingtip",
  "Lucerne",
  "Margie",
  "Trey",
  "Alpine",
  "Coho",
  "Fourth",
  "Humongous",
];
const companySuffixes = ["Corp", "Industries", "Labs", "Systems", "Group", "Holdings", "Partners", "Technologies", "Logistics", "Foods"];
const industries = ["Technology", "Finance", "Healthcare", "Energy", "Retail", "Manufacturing", "Education", "Media"];
const cities = ["Berlin", "Austin", "Lyon", "Osaka", "Toronto", "Madrid", "Denver", "Krakow", "Porto", "Leeds"];
const countries = ["DE", "US", "FR", "JP", "CA", "ES", "US", "PL", "PT", "GB"];
const titles = ["CEO", "CTO", "VP Sales", "Buyer", "Engineer", "Office Manager", "Director", "Analyst"];
const dealKinds = ["Renewal", "Upgrade", "New Business", "Expansion", "Services", "Pilot"];
const caseIssues = [
  "Password reset",
  "Invoice question",
  "Login failure",
  "Data export",
  "Billing error",
  "Outage report",
  "Feature request",
  "Shipping delay",
  "Refund request",
  "API timeout",
];
const caseAreas = ["portal", "mobile app", "reports", "integration", "checkout", "dashboard"];

/** mulberry32: a small, fast, seeded generator — the same data on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The columns a generated row fills, in order: standard fields without id, then search_text. */
export function loadColumns(object: CrmObject): string[] {
  return [...standardFields[object].filter((f) => f.name !== "id").map((f) => f.name), "search_text"];
}

export interface Population {
  /** Owner ids, picked uniformly per record. */
  owners: readonly number[];
  /** How many records each object has; references point into 1..count of their target. */
  count: number;
}

/**
 * `count` rows of `object`, each an array of values in loadColumns order. References name ids
 * 1..count of their target, which a fresh table's first bulk load gives its rows.
 */
export function* generateRows(object: CrmObject, pop: Population, seed: number): Generator<unknown[]> {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const refId = () => 1 + Math.floor(rand() * pop.count);
  const schema = makeSchema(object, [...standardFields[object]]);
  const columns = loadColumns(object);
  const start = Date.now() - historyDays * msPerDay;
  const step = (historyDays * msPerDay) / pop.count;
  for (let i = 0; i < pop.count; i++) {
    const at = new Date(start + i * step + Math.floor(rand() * step)).toISOString();
    const company = `${pick(companyWords)} ${pick(companySuffixes)}`;
    const first = pick(firstNames);
    const last = pick(lastNames);
    const email = `${first}.${last}@${company.split(" ")[0]!.toLowerCase()}.example`.toLowerCase();
    const r: RecordData = { owner_id: pick(pop.owners), created_at: at, updated_at: at };
    switch (object) {
      case "accounts": {
        const city = Math.floor(rand() * cities.length);
        Object.assign(r, {
          name: company,
          website: `www.${company.replace(/ /g, "").toLowerCase()}.example`,
          phone: `+1 555 ${String(i % 10_000).padStart(4, "0")}`,
          industry: pick(industries),
          billing_city: cities[city],
          billing_country: countries[city],
          annual_revenue: Math.round(rand() * 50_000_000),
          employees: 1 + Math.floor(rand() * 5000),
          description: null,
        });
        break;
      }
      case "contacts":
        Object.assign(r, {
          first_name: first,
          last_name: last,
          account_id: refId(),
          email,
          phone: null,
          title: pick(titles),
          mailing_city: pick(cities),
          description: null,
        });
        break;
      case "leads":
        Object.assign(r, {
          first_name: first,
          last_name: last,
          company,
          email,
          phone: null,
          status: pick(leadStatuses),
          rating: pick(["Hot", "Warm", "Cold"]),
          source: pick(["Web", "Phone Inquiry", "Partner Referral", "Purchased List", "Other"]),
          description: null,
        });
        break;
      case "opportunities":
        Object.assign(r, {
          name: `${company} - ${pick(dealKinds)}`,
          account_id: refId(),
          stage: pick(opportunityStages),
          amount: Math.round(rand() * 200_000),
          close_date: at.slice(0, 10),
          probability: Math.floor(rand() * 101),
          description: null,
        });
        break;
      case "cases":
        Object.assign(r, {
          subject: `${pick(caseIssues)} in ${pick(caseAreas)}`,
          status: pick(["New", "Working", "Escalated", "Closed"]),
          priority: pick(["High", "Medium", "Low"]),
          origin: pick(["Phone", "Email", "Web"]),
          account_id: refId(),
          contact_id: refId(),
          description: null,
        });
        break;
    }
    r.search_text = searchText(schema, r);
    yield columns.map((c) => r[c] ?? null);
  }
}
