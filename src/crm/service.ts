/**
 * `svc crm`: the CRM record API (docs/crm.md) over SQLite (the embedded default) or PostgreSQL.
 * The schema is migrated before the port opens; tools beside it add roles, users and tokens.
 */
import { flag } from "../core/config.ts";
import { crmListCountMaxDefault, crmListCountMaxMax, crmRequestBodyBytesMax, crmSearchNewestRowsDefault, crmSearchNewestRowsMax } from "../core/limits.ts";
import { defineService } from "../service.ts";
import { formatBindAddress, parseBindAddress } from "../core/bind-address.ts";
import { startCrmHttp } from "./http/server.ts";
import { openStore } from "./store/open.ts";
import { parseDbUrl } from "./store/db.ts";
import { crmTools, dbDefault } from "./tools.ts";

export const crmService = defineService({
  name: "crm",
  summary: "CRM record API: five objects, sharing, custom fields, validation rules, workflow rules, flows",
  envPrefix: "SVC_CRM",
  flags: {
    bind: flag.string({ default: "127.0.0.1:3000", help: "HTTP address host:port; port 0 picks a free one (printed)" }),
    db: flag.string({ default: dbDefault, help: "the store: sqlite:PATH (WAL) or postgres://user@host:port/db" }),
    maxRequestBodyBytes: flag.bytes({ default: crmRequestBodyBytesMax, min: 1, max: crmRequestBodyBytesMax, help: "largest request body (413 past it)" }),
    listCountMax: flag.int({
      default: crmListCountMaxDefault,
      min: 1,
      max: crmListCountMaxMax,
      help: "a list's total counts matches up to this many, then says total_exact: false",
    }),
    searchNewestRows: flag.int({
      default: crmSearchNewestRowsDefault,
      min: 1,
      max: crmSearchNewestRowsMax,
      help: "a search looks for its page among the user's this many newest records first; its total then says at least",
    }),
  },
  tools: crmTools,
  async start(config, log) {
    const bind = parseBindAddress(config.bind);
    const target = parseDbUrl(config.db);
    const db = await openStore(config.db, log, { serving: true });
    const http = startCrmHttp(db, {
      hostname: bind.hostname,
      port: bind.port,
      bodyBytesMax: config.maxRequestBodyBytes,
      listLimits: { countMax: config.listCountMax, searchNewestRows: config.searchNewestRows },
      log,
    });
    const address = formatBindAddress(bind.hostname, http.port);
    log.info({ address, store: target.kind }, "crm listening (HTTP)");
    return {
      endpoints: [{ protocol: "HTTP", address, tryIt: `curl -H "Authorization: Bearer $TOKEN" http://${address}/api/v1/leads` }],
      async stop() {
        await http.stop();
        await db.close();
      },
    };
  },
});
