/**
 * The principal an HTTP request acts as. Authentication is off (the default), so every request
 * is anonymous; with API keys this reads `Authorization: Bearer` or `X-Svc-Key`.
 */
import { anonymous, type Principal } from "../auth/principal.ts";

export function principalOf(_req: Request): Principal {
  return anonymous;
}
