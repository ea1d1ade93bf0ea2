/**
 * Media tokens: compact HS256 JSON Web Tokens (RFC 7519) whose `sub` is the user, `room` the room
 * and `exp` the expiry in seconds since the epoch. The spec leaves the format open; a JWT is what
 * LiveKit, Twilio and Janus's token plugins hand out, so existing tooling can mint ours too.
 *
 * Verification accepts only `alg: HS256` (the classic JWT flaw is trusting the header's alg), and
 * compares the signature with timingSafeEqual so a caller cannot learn it byte by byte from timing.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { SvcError } from "../core/errors.ts";
import { mediaTokenBytesMax, mediaUserIdBytesMax } from "../core/limits.ts";

export interface TokenClaims {
  /** The user the token acts as. */
  user: string;
  room: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString("base64url");
}

function signature(secret: string, signingInput: string): Buffer {
  return createHmac("sha256", secret).update(signingInput).digest();
}

export function mintToken(secret: string, claims: TokenClaims): string {
  const payload = base64url(JSON.stringify({ sub: claims.user, room: claims.room, exp: claims.exp }));
  const signingInput = `${header}.${payload}`;
  return `${signingInput}.${signature(secret, signingInput).toString("base64url")}`;
}

const unauthorized = (why: string) => new SvcError("unauthorized", `token ${why}`);

/** A non-empty id of bounded size: the same rule for a token's user and room and for peers. */
export function isValidId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && Buffer.byteLength(value) <= mediaUserIdBytesMax;
}

function decodeJson(part: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw unauthorized("is malformed");
}

/**
 * The claims of a valid token, or a 401 saying what is wrong with it: missing, malformed, signed
 * with another secret or another algorithm, or expired at `nowMs`.
 */
export function verifyToken(secret: string, token: unknown, nowMs: number): TokenClaims {
  if (token === undefined || token === null || token === "") throw unauthorized("is missing");
  if (typeof token !== "string" || token.length > mediaTokenBytesMax) throw unauthorized("is malformed");
  const parts = token.split(".");
  if (parts.length !== 3) throw unauthorized("is malformed");
  const [head, payload, sig] = parts as [string, string, string];
  if (decodeJson(head).alg !== "HS256") throw unauthorized("is not signed with HS256");
  const expected = signature(secret, `${head}.${payload}`);
  const given = Buffer.from(sig, "base64url");
  // Length is public (every HS256 signature is 32 bytes); only equal lengths reach the comparison.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unauthorized("signature does not match");
  const claims = decodeJson(payload);
  if (!isValidId(claims.sub) || !isValidId(claims.room) || typeof claims.exp !== "number") {
    throw unauthorized("lacks sub, room or exp");
  }
  if (claims.exp * 1000 <= nowMs) throw unauthorized("has expired");
  return { user: claims.sub, room: claims.room, exp: claims.exp };
}
