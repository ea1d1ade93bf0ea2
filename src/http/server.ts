/**
 * The one HTTP server wrapper every svc service uses, over Bun.serve and its native route table.
 * It gives each request an id, reads JSON bodies within the service's byte limit, applies the
 * service's CORS policy, answers unknown paths 404 and unserved methods 405, and shapes every
 * error with the service's envelope. A handler that throws something other than an SvcError is a
 * bug: the client gets `internal error (id <id>)`, the log gets the stack under that id, and the
 * server keeps serving.
 */
import type { BunRequest, Server } from "bun";
import { isSvcError, SvcError } from "../core/errors.ts";
import { httpIdleTimeoutSecondsDefault } from "../core/limits.ts";
import type { Logger } from "../core/log.ts";
import { readJsonBody } from "./body.ts";
import { type CorsPolicy, preflightHeaders, setCorsHeaders } from "./cors.ts";
import { requestIdFor } from "./request-id.ts";
import { json, noContent } from "./response.ts";
import { type Handler, httpMethods, type RequestContext, type RouteTable } from "./route.ts";

export interface HttpServiceOptions {
  /** Names the service in log lines. */
  name: string;
  hostname: string;
  /** 0 picks a free port (tests). */
  port: number;
  routes: RouteTable;
  /** Largest JSON body a handler may read; larger ones are answered 413. */
  bodyBytesMax: number;
  cors: CorsPolicy;
  log: Logger;
  /** The service's error body; `{"error": message}` unless it says otherwise. */
  errorBody?: (error: SvcError) => unknown;
  /**
   * Seconds a connection may send nothing, mid-request or between requests, before it is closed
   * (httpIdleTimeoutSecondsDefault unless set); a handler's holdOpen lifts it for its request.
   */
  idleTimeoutSeconds?: number;
  /**
   * Whether a successful answer carries X-Request-Id too (default true). Without it the id is
   * made only where something uses it — an error answer, a log line, a handler that asks — and
   * goes out on that answer. Reading the client's id makes Bun build the request's headers, and
   * setting it builds the response's: 1.5 µs of the 12.5 a kv GET costs the server (measured,
   * docs/kv-rest.md), spent on answers no log line will ever be matched with.
   */
  idOnSuccess?: boolean;
  /** PEM certificate chain and key: serve HTTPS instead of HTTP. */
  tls?: { cert: string; key: string };
}

export interface HttpService {
  readonly url: URL;
  readonly port: number;
  /** Stops accepting; waits for requests in flight unless `force`. */
  stop(force?: boolean): Promise<void>;
}

const defaultErrorBody = (error: SvcError): unknown => ({ error: error.message });

class Context implements RequestContext {
  #url: URL | undefined;
  #log: Logger | undefined;
  #id: string | undefined;

  constructor(
    readonly req: BunRequest,
    readonly params: Record<string, string>,
    private readonly service: HttpServiceOptions,
    private readonly server: Server<undefined>,
  ) {}

  /** Made on first use: the client's id is a header, and reading one makes Bun build them all. */
  get id(): string {
    return (this.#id ??= requestIdFor(this.req));
  }

  /** Whether anything has asked for the id, so that the answer must carry it. */
  get idUsed(): boolean {
    return this.#id !== undefined;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.req.url));
  }

  get log(): Logger {
    return (this.#log ??= this.service.log.child({ reqId: this.id }));
  }

  json<T>(): Promise<T> {
    return readJsonBody<T>(this.req, this.service.bodyBytesMax);
  }

  holdOpen(): void {
    // 0 turns Bun's idle timer off for this request; the connection's own close still ends it.
    this.server.timeout(this.req, 0);
  }
}

/** Runs one handler and turns whatever it does into a response carrying id and CORS headers. */
function dispatcher(options: HttpServiceOptions) {
  const errorBody = options.errorBody ?? defaultErrorBody;
  const log = options.log.child({ service: options.name });

  function errorResponse(error: unknown, id: string): Response {
    if (isSvcError(error)) {
      const headers = { ...error.headers };
      // The unread rest of an oversized body is still on the connection: do not reuse it.
      if (error.code === "body_too_large") headers.connection = "close";
      return json(errorBody(error), error.status, headers);
    }
    log.error({ reqId: id, err: error }, "unhandled error in handler");
    return json(errorBody(new SvcError("internal", `internal error (id ${id})`)), 500);
  }

  const idOnSuccess = options.idOnSuccess ?? true;
  return async (req: BunRequest, server: Server<undefined>, handler: Handler): Promise<Response> => {
    const ctx = new Context(req, req.params ?? {}, options, server);
    let response: Response;
    try {
      response = await handler(ctx);
    } catch (error) {
      response = errorResponse(error, ctx.id);
    }
    if (log.isLevelEnabled("debug")) {
      log.debug({ reqId: ctx.id, method: req.method, path: new URL(req.url).pathname, status: response.status });
    }
    if (idOnSuccess || ctx.idUsed) response.headers.set("x-request-id", ctx.id);
    setCorsHeaders(options.cors, req, response.headers);
    return response;
  };
}

function methodNotAllowed(served: readonly string[]): Handler {
  return ({ req }) => {
    throw new SvcError("method_not_allowed", `${req.method} is not served here; use ${served.join(", ")}`, {
      headers: { allow: [...served, "OPTIONS"].join(", ") },
    });
  };
}

const noRoute: Handler = ({ req, url }) => {
  throw new SvcError("not_found", `no route for ${req.method} ${url.pathname}`);
};

type BunMethodTable = Record<string, (req: BunRequest, server: Server<undefined>) => Promise<Response>>;

/** Bun's route table: every method of every path answered, unserved ones with 405. */
function bunRoutes(options: HttpServiceOptions, run: ReturnType<typeof dispatcher>): Record<string, BunMethodTable> {
  const table: Record<string, BunMethodTable> = {};
  for (const [path, handlers] of Object.entries(options.routes)) {
    const served = httpMethods.filter((m) => handlers[m] !== undefined);
    const refuse = methodNotAllowed(served);
    const methods: BunMethodTable = {};
    for (const method of httpMethods) {
      const handler = handlers[method] ?? refuse;
      methods[method] = (req, server) => run(req, server, handler);
    }
    methods.OPTIONS = (req, server) => run(req, server, () => noContent(preflightHeaders(options.cors, req, served)));
    table[path] = methods;
  }
  return table;
}

export function startHttpServer(options: HttpServiceOptions): HttpService {
  const run = dispatcher(options);
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    development: false,
    // Bun shares the port (SO_REUSEPORT) unless told not to: a second server started on a taken
    // port would silently split requests with the first instead of failing to start.
    reusePort: false,
    idleTimeout: options.idleTimeoutSeconds ?? httpIdleTimeoutSecondsDefault,
    // Bun's own cap answers an empty 413 before our handler sees the request; body.ts enforces
    // the service's limit with the service's error body, so Bun's cap is set out of the way.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    routes: bunRoutes(options, run),
    fetch: (req, server) => run(req as BunRequest, server, noRoute),
    // Reached only if the wrapper itself fails; handlers' errors are answered in dispatcher().
    error(error) {
      options.log.error({ service: options.name, err: error }, "http wrapper failure");
      return new Response(JSON.stringify({ error: "internal error" }), { status: 500 });
    },
  });
  return {
    url: server.url,
    port: server.port!,
    stop: (force = false) => server.stop(force),
  };
}
