/**
 * What a REST route handler sees: the HTTP request, its path parameters as byte strings, its
 * query, its body checked against the route's fields, the command runner, and the user it runs
 * as. Route modules declare RestRoutes; server.ts turns them into the HTTP layer's RouteTable,
 * checking the credentials before any handler runs.
 */
import { SvcError } from "../../core/errors.ts";
import type { AclUser } from "../acl/acl-user.ts";
import type { HttpMethod, RequestContext } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import { type Body, objectBody } from "./body-fields.ts";
import type { CommandRunner, Outcome, RunOptions } from "./command-runner.ts";
import type { Json } from "./json-reply.ts";

export class RestRequest {
  constructor(
    readonly http: RequestContext,
    /** Path parameters, percent-decoded to byte strings (path-params.ts). */
    readonly params: Record<string, string>,
    readonly runner: CommandRunner,
    /** The ACL user the request's commands run as (auth.ts). */
    readonly user: AclUser,
  ) {}

  /** A query parameter as sent (UTF-8 text), or `fallback` when absent. */
  query(name: string, fallback: string): string;
  query(name: string): string | undefined;
  query(name: string, fallback?: string): string | undefined {
    return this.http.url.searchParams.get(name) ?? fallback;
  }

  /** The JSON body, which must be an object of only `fields`. */
  async body(fields: readonly string[]): Promise<Body> {
    return objectBody(await this.http.json(), fields);
  }

  run(argv: string[], options?: RunOptions): Promise<Outcome> {
    return this.runner.run(argv, this.user, options);
  }
}

export type RestHandler = (r: RestRequest) => Promise<Response>;
export type RestRoutes = Record<string, Partial<Record<HttpMethod, RestHandler>>>;

/**
 * The HTTP status of a command's error reply: 409 for WRONGTYPE (the request is fine, the key
 * holds another kind of value), 503 for MISCONF, OOM and BUSY (the server cannot persist writes,
 * take more data, or serve anyone but a busy script, now; a retry may succeed once it can), 403 for NOPERM (the default user, which
 * the REST API runs as, may not run the command or touch its keys: ACL), 500 for a command that
 * failed unexpectedly (a bug, logged by the engine), 400 for every other error (syntax, range,
 * unknown command, arity).
 */
export function errorCode(message: string): "conflict" | "unavailable" | "forbidden" | "internal" | "bad_request" {
  if (message.startsWith("WRONGTYPE ")) return "conflict";
  if (message.startsWith("NOPERM ")) return "forbidden";
  if (message.startsWith("MISCONF ") || message.startsWith("OOM ") || message.startsWith("BUSY ")) return "unavailable";
  if (message.startsWith("ERR internal error")) return "internal";
  return "bad_request";
}

/** The command's value, or its error thrown as the HTTP error the wrapper answers. */
export function outcomeValue(outcome: Outcome): Json {
  if (!outcome.ok) throw new SvcError(outcome.killed ? "unavailable" : errorCode(outcome.error), outcome.error);
  return outcome.value;
}

/** `{"result": value}` with 200. */
export function result(value: Json): Response {
  return json({ result: value });
}

/** Runs `argv` and answers its value as `{"result": ...}`, shaped by `shape` when given. */
export async function runAndAnswer(r: RestRequest, argv: string[], shape?: (value: Json) => Json, options?: RunOptions): Promise<Response> {
  const value = outcomeValue(await r.run(argv, options));
  return result(shape === undefined ? value : shape(value));
}

/** 404 with the error envelope, for a single item that is not there. */
export function notFound(message: string): never {
  throw new SvcError("not_found", message);
}
