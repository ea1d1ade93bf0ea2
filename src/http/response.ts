/** Small constructors for the responses handlers return. */

export function json(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return Response.json(body, headers ? { status, headers } : { status });
}

export function noContent(headers?: Record<string, string>): Response {
  return new Response(null, headers ? { status: 204, headers } : { status: 204 });
}

export function text(body: string, status = 200, contentType = "text/plain; charset=utf-8"): Response {
  return new Response(body, { status, headers: { "content-type": contentType } });
}
