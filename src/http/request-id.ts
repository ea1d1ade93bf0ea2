/**
 * Request ids: every request gets one, echoed in X-Request-Id and in every log line about it.
 * A client's own id is kept when it is short and plain, so a trace can cross our boundary;
 * otherwise we mint one from a per-process prefix and a counter (cheap, unique per process,
 * and still unique across restarts thanks to the random prefix).
 */
import { requestIdLengthMax } from "../core/limits.ts";

const acceptable = new RegExp(`^[A-Za-z0-9._:-]{1,${requestIdLengthMax}}$`);
const processPrefix = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36).padStart(7, "0");
let counter = 0;

export function requestIdFor(req: Request): string {
  const offered = req.headers.get("x-request-id");
  if (offered !== null && acceptable.test(offered)) return offered;
  counter += 1;
  return `${processPrefix}-${counter.toString(36)}`;
}
