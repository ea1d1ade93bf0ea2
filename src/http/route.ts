/**
 * What a service hands the HTTP wrapper: a table of path patterns (Bun's `routes` syntax, e.g.
 * `/kv/:key`) to handlers per method. Each resource keeps its routes in its own small module;
 * the service merges them into one table.
 */
import type { BunRequest } from "bun";
import type { Logger } from "../core/log.ts";

export const httpMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof httpMethods)[number];

export interface RequestContext {
  readonly req: BunRequest;
  /** Path parameters, already percent-decoded by Bun. */
  readonly params: Record<string, string>;
  /** This request's id: the client's X-Request-Id when it is sane, otherwise one of ours. */
  readonly id: string;
  /** A logger whose lines carry this request's id. */
  readonly log: Logger;
  /** The parsed request URL (for query parameters). */
  readonly url: URL;
  /** The JSON body, read within the service's byte limit; see body.ts for the errors. */
  json<T = unknown>(): Promise<T>;
  /**
   * Lets this request's connection sit silent for as long as its handler waits (a long poll),
   * instead of being closed after the server's idle timeout. The handler must bound its own wait.
   */
  holdOpen(): void;
}

export type Handler = (ctx: RequestContext) => Response | Promise<Response>;
export type RouteTable = Record<string, Partial<Record<HttpMethod, Handler>>>;
