/** Where things are, for commands that start other processes. */
import { homedir } from "node:os";
import { join } from "node:path";

export const repoRoot = join(import.meta.dir, "../..");
export const cliPath = join(repoRoot, "src/cli.ts");
/** The bootstrap exports SVC_CACHE_DIR; running `bun src/cli.ts` directly falls back to its default. */
export const cacheDir = process.env.SVC_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "svc");
