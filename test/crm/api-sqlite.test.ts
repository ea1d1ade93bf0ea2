// The crm end-to-end suite against `svc crm --db sqlite:...`.
import { crmApiSuite } from "./support/api-suite.ts";
import { sqliteBackend } from "./support/crm.ts";
import { crmInputSuite } from "./support/input-suite.ts";

crmApiSuite(sqliteBackend());
crmInputSuite(sqliteBackend());
