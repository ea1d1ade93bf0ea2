/**
 * POST /cmd: any command of the command table, by name, with the semantics it has over RESP —
 * it goes through the same Engine.execute. What differs is what a connection would carry:
 *
 * - each request is its own client, so commands that only set up state for later commands on the
 *   same connection (MULTI/EXEC, WATCH, SUBSCRIBE, SELECT, AUTH, HELLO …) are refused with 400;
 * - a blocking command (BLPOP, BLMOVE, BZPOPMIN …) really waits, up to its own timeout or
 *   `--http-block-timeout` (default 30 s, at most an hour), whichever comes first,
 *   and then answers as a timed-out RESP client does: null;
 * - replies take RESP3's shapes (maps as objects, doubles as numbers) unless the body asks for
 *   `"protocol": 2`, which gives exactly RESP2's structure (json-reply.ts).
 */
import { SvcError } from "../../../core/errors.ts";
import { lookupCommand } from "../../server/command-table.ts";
import { jsonToBytes } from "../bytes-json.ts";
import type { Body } from "../body-fields.ts";
import { type RestRoutes, runAndAnswer } from "../request.ts";

/** Commands whose point is state kept on a connection for its later commands. */
const connectionState = new Set([
  "multi",
  "exec",
  "discard",
  "watch",
  "unwatch",
  "subscribe",
  "unsubscribe",
  "psubscribe",
  "punsubscribe",
  "ssubscribe",
  "sunsubscribe",
  "select",
  "auth",
  "hello",
  "reset",
  "quit",
  "monitor",
]);

const bad = (message: string) => new SvcError("bad_request", message);

function argument(value: unknown, i: number): string {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  const bytes = jsonToBytes(value, `args[${i}]`);
  if (bytes === undefined) throw bad(`'args[${i}]' must be a string, a number or {"base64": "..."}`);
  return bytes;
}

function commandArgv(body: Body): string[] {
  const { command, args = [] } = body;
  if (typeof command !== "string" || command.length === 0) throw bad("'command' must be a command name such as \"GET\"");
  if (!command.isWellFormed()) throw bad("'command' is not valid Unicode (it holds a lone surrogate)");
  if (!Array.isArray(args)) throw bad("'args' must be an array of strings");
  return [command, ...args.map(argument)];
}

function protocolOf(body: Body): 2 | 3 {
  const { protocol = 3 } = body;
  if (protocol !== 2 && protocol !== 3) throw bad("'protocol' must be 2 or 3");
  return protocol;
}

export function cmdRoutes(blockTimeoutMs: number, respPort: () => string): RestRoutes {
  return {
    "/cmd": {
      async POST(r) {
        const body = await r.body(["command", "args", "protocol"]);
        const argv = commandArgv(body);
        const protocol = protocolOf(body);
        const spec = lookupCommand(argv[0]!);
        if (spec !== undefined && connectionState.has(spec.name)) {
          throw bad(
            `ERR ${spec.name.toUpperCase()} keeps state on a connection, and each REST request is a client of its own; ` +
              `send it over RESP (port ${respPort()})`,
          );
        }
        const wait = { signal: r.http.req.signal, timeoutMs: blockTimeoutMs, peer: () => `rest:${r.http.id}`, holdOpen: () => r.http.holdOpen() };
        return runAndAnswer(r, argv, undefined, { protocol, wait });
      },
    },
  };
}
