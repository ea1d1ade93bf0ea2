// The crm end-to-end suite against `svc crm --db postgres://...`, on a PostgreSQL the test starts.
import { crmApiSuite } from "./support/api-suite.ts";
import { postgresBackend } from "./support/crm.ts";
import { crmInputSuite } from "./support/input-suite.ts";

const postgres = postgresBackend();
crmApiSuite(postgres);
crmInputSuite(postgres);
