/**
 * The secret tokens are signed with. An operator passes --token-secret or SVC_MEDIA_TOKEN_SECRET;
 * with neither, the first run (of the service or of `svc media token`) generates 32 random bytes
 * into <data-dir>/token-secret, readable by its owner only, and every later run reads the same
 * file — so a token minted by `svc media token` works against `svc up` without any setup.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../core/errors.ts";

/** Shortest secret accepted: RFC 7518 §3.2 asks HS256 keys to be at least as long as the hash (32 bytes). */
export const tokenSecretBytesMin = 32;

export const tokenSecretFileName = "token-secret";

export interface ResolvedSecret {
  secret: string;
  /** Where it came from: "flag or environment", or the file it was read from or written to. */
  source: string;
  generated: boolean;
}

export function resolveTokenSecret(given: string, dataDir: string): ResolvedSecret {
  if (given !== "") {
    if (Buffer.byteLength(given) < tokenSecretBytesMin) {
      throw new SvcError("bad_config", `--token-secret: expected at least ${tokenSecretBytesMin} bytes (HS256 wants a key as long as its hash)`);
    }
    return { secret: given, source: "--token-secret or SVC_MEDIA_TOKEN_SECRET", generated: false };
  }
  const path = join(dataDir, tokenSecretFileName);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    try {
      // Exclusive create with owner-only mode: never readable by others, and of two first runs
      // racing, one writes and the other reads what it wrote.
      writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
      return { secret, source: path, generated: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  const secret = readFileSync(path, "utf8").trim();
  if (Buffer.byteLength(secret) < tokenSecretBytesMin) throw new SvcError("bad_config", `${path}: token secret is shorter than ${tokenSecretBytesMin} bytes`);
  return { secret, source: path, generated: false };
}
