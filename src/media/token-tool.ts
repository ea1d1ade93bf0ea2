/**
 * `svc media token --user U --room R [--ttl 3600]`: prints a token for the media API. It signs
 * with the same secret the service uses (--token-secret, SVC_MEDIA_TOKEN_SECRET, or the file in
 * --data-dir that the service generates on its first run), so its tokens work against `svc up`.
 */
import type { Command } from "../cli/command.ts";
import { flag, formatHelp, parseConfig } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import { mediaTokenTtlSecondsDefault, mediaTokenTtlSecondsMax } from "../core/limits.ts";
import { mintToken, isValidId } from "./token.ts";
import { resolveTokenSecret } from "./token-secret.ts";

/** Where the service keeps its generated secret unless --data-dir says otherwise. */
export const mediaDataDirDefault = "data/media";

const envPrefix = "SVC_MEDIA";

const flags = {
  user: flag.string({ required: true, help: "the user the token acts as (its sub claim)" }),
  room: flag.string({ required: true, help: "the room the token is for" }),
  ttl: flag.int({ default: mediaTokenTtlSecondsDefault, min: 1, max: mediaTokenTtlSecondsMax, help: "seconds until the token expires" }),
  tokenSecret: flag.string({ default: "", help: "HS256 secret (at least 32 bytes); empty: the one in --data-dir, generated if missing" }),
  dataDir: flag.string({ default: mediaDataDirDefault, help: "where the service keeps its generated token secret" }),
};

export const tokenTool: Command = {
  name: "token",
  summary: "print a token for the media API: svc media token --user U --room R --ttl 3600",
  help: () =>
    `usage: svc media token --user U --room R [--ttl 3600]\n\nPrints an HS256 JWT (sub = user, room, exp) the media service accepts.\n\nflags:\n${formatHelp(flags, envPrefix)}`,
  async run(args) {
    const { values, positionals } = parseConfig(flags, args, process.env, envPrefix);
    if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
    if (!isValidId(values.user)) throw new SvcError("bad_config", "--user: expected 1 to 256 bytes");
    if (!isValidId(values.room)) throw new SvcError("bad_config", "--room: expected 1 to 256 bytes");
    const { secret } = resolveTokenSecret(values.tokenSecret, values.dataDir);
    const exp = Math.floor(Date.now() / 1000) + values.ttl;
    process.stdout.write(`${mintToken(secret, { user: values.user, room: values.room, exp })}\n`);
    return 0;
  },
};
