/**
 * How the /settings pages answer: HTML with headers that keep them out of frames and caches, a
 * 303 back to a page after a post that changed something (post-redirect-get, so a reload repeats
 * nothing), and the checks every form post passes before its action runs.
 *
 * Protection, since a session cookie authenticates these posts:
 * - the cookie is HttpOnly and SameSite=Strict, so other sites' pages cannot send it;
 * - a post whose Origin header names another host is refused (403) on top of that;
 * - pages carry a CSP that forbids scripts and framing (no clickjacking of the buttons), and
 *   `no-store`, so a token shown once is not kept in the browser's cache.
 */
import type { BunRequest } from "bun";
import { isSvcError } from "../../core/errors.ts";
import { readBodyBytes } from "../../http/body.ts";
import { sessionCookieName } from "./browser-sessions.ts";
import { signInPage } from "./settings-page.ts";

const pageHeaders = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  // Not no-referrer: under it Chromium sends `Origin: null` with the page's own form posts.
  "referrer-policy": "same-origin",
};

export function page(html: string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { ...pageHeaders, ...extra } });
}

/** After a post that changed something: back to `location` with a GET. */
export function seeOther(location = "/settings", extra: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store", ...extra } });
}

export function sessionId(req: BunRequest): string | undefined {
  return req.cookies.get(sessionCookieName) ?? undefined;
}

/** True when a browser says the post comes from another site's page. */
function crossOrigin(req: Request): boolean {
  const origin = req.headers.get("origin");
  if (origin === null || origin === "null") return origin === "null";
  try {
    return new URL(origin).host !== req.headers.get("host");
  } catch {
    return true;
  }
}

async function readForm(req: Request, bytesMax: number): Promise<URLSearchParams | null> {
  const type = (req.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return null;
  const bytes = await readBodyBytes(req, bytesMax);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/**
 * Runs a post's action after the checks every post shares (same origin, a form, at most
 * `bytesMax`); answers HTML for every outcome.
 */
export async function receiveForm(req: Request, bytesMax: number, action: (form: URLSearchParams) => Promise<Response>): Promise<Response> {
  if (crossOrigin(req)) return page(signInPage("This form was posted from another site and was refused."), 403);
  let form: URLSearchParams | null;
  try {
    form = await readForm(req, bytesMax);
  } catch (error) {
    if (isSvcError(error) && error.code === "body_too_large") {
      return page(signInPage("The form was too large."), 413, { connection: "close" });
    }
    throw error;
  }
  if (form === null) return page(signInPage("Expected an HTML form post."), 415);
  return action(form);
}
