// Media tokens: what `svc media token` mints verifies with the same secret, and a missing,
// malformed, expired, differently signed or alg-swapped token is refused with 401 and a reason.
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { SvcError } from "../../src/core/errors.ts";
import { resolveTokenSecret } from "../../src/media/token-secret.ts";
import { mintToken, verifyToken } from "../../src/media/token.ts";
import { tempDir } from "../support/temp-dir.ts";

const secret = "s".repeat(32);
const now = 1_700_000_000_000;
const exp = now / 1000 + 60;

function refusal(token: unknown, key = secret, at = now): string {
  try {
    verifyToken(key, token, at);
  } catch (error) {
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).status).toBe(401);
    return (error as SvcError).message;
  }
  throw new Error("token was accepted");
}

describe("media tokens", () => {
  test("property: a minted token verifies to the same user, room and expiry", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), fc.string({ minLength: 1, maxLength: 64 }), (user, room) => {
        expect(verifyToken(secret, mintToken(secret, { user, room, exp }), now)).toEqual({ user, room, exp });
      }),
    );
  });

  test("missing, malformed, expired and differently signed tokens get 401 naming why", () => {
    const good = mintToken(secret, { user: "u", room: "r", exp });
    expect(refusal(undefined)).toBe("token is missing");
    expect(refusal("")).toBe("token is missing");
    expect(refusal(42)).toBe("token is malformed");
    expect(refusal("a.b")).toBe("token is malformed");
    expect(refusal("!!.@@.##")).toBe("token is malformed");
    expect(refusal(good, "t".repeat(32))).toBe("token signature does not match");
    expect(refusal(good, secret, exp * 1000)).toBe("token has expired");
    expect(refusal(mintToken(secret, { user: "u", room: "r", exp: now / 1000 - 1 }))).toBe("token has expired");
    // One flipped character of the signature.
    const flipped = good.slice(0, -2) + (good.at(-2) === "A" ? "B" : "A") + good.at(-1);
    expect(refusal(flipped)).toBe("token signature does not match");
  });

  test("only HS256 is accepted: an alg:none token or one without sub/room is refused", () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const payload = b64({ sub: "u", room: "r", exp });
    expect(refusal(`${b64({ alg: "none" })}.${payload}.`)).toBe("token is not signed with HS256");
    const head = b64({ alg: "HS256" });
    const noRoom = b64({ sub: "u", exp });
    const sig = createHmac("sha256", secret).update(`${head}.${noRoom}`).digest("base64url");
    expect(refusal(`${head}.${noRoom}.${sig}`)).toBe("token lacks sub, room or exp");
  });

  test("with no secret given, one is generated once into the data dir (owner-only) and read back after", () => {
    const dir = join(tempDir("media-secret-"), "media");
    const first = resolveTokenSecret("", dir);
    expect(first.generated).toBe(true);
    expect(statSync(join(dir, "token-secret")).mode & 0o777).toBe(0o600);
    const second = resolveTokenSecret("", dir);
    expect(second).toEqual({ secret: first.secret, source: join(dir, "token-secret"), generated: false });
    expect(readFileSync(join(dir, "token-secret"), "utf8").trim()).toBe(first.secret);
    expect(() => resolveTokenSecret("short", dir)).toThrow(/at least 32 bytes/);
  });
});
