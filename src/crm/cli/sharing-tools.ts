/** `svc crm sharing recalculate`: materialized access after a bulk import (docs/crm.md "Sharing"). */
import { rebuildAllAccess } from "../sharing/sharing-rules.ts";
import { group, tool } from "./tool.ts";

const sharingRecalculate = tool(
  "recalculate",
  "sharing recalculate",
  "rewrites who-can-read-what for every object: run it after loading records straight into the database",
  {},
  async (db) => {
    const start = performance.now();
    await db.write((tx) => rebuildAllAccess(tx));
    return `sharing recalculated in ${((performance.now() - start) / 1000).toFixed(1)} s`;
  },
);

export const sharingTools = group("sharing", "maintain sharing", [sharingRecalculate]);
