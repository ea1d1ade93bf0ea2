// The crm end-to-end suite against `svc crm --db sqlite:...`.
import { crmApiSuite } from "./support/api-suite.ts";
import { sqliteBackend } from "./support/crm.ts";

crmApiSuite(sqliteBackend());
