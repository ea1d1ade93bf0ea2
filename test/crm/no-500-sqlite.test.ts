// Random requests to every route of `svc crm --db sqlite:...`: never a 5xx, and a refusal changes nothing.
import { sqliteBackend } from "./support/crm.ts";
import { crmNo500Suite } from "./support/no-500-suite.ts";

crmNo500Suite(sqliteBackend(), { runs: 1500, timeoutMs: 120_000 });
