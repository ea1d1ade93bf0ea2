/**
 * The null server (bench/null-server): a RESP server that answers +OK to every command and does
 * nothing else, shaped like Redis's event loop. What redis-benchmark reaches against it is the
 * rate the client drives when a request costs the server nothing: at -P 16 far above svc and
 * redis-server, at -P 1 on two cores no higher than theirs (docs/kv.md says why). Built on first use by cargo (which rebuilds only when its sources change) into svc's cache.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { spawnServer } from "../../test/support/spawn.ts";
import type { ServerProcess } from "../../test/kv/support/servers.ts";

const crate = join(import.meta.dir, "../null-server");

function build(): string {
  // ./svc sets SVC_CACHE_DIR; a benchmark run by hand uses the same default place.
  const cache = process.env.SVC_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "svc");
  const targetDir = join(cache, "null-server-target");
  const built = Bun.spawnSync(["cargo", "build", "--release", "--quiet", "--manifest-path", join(crate, "Cargo.toml"), "--target-dir", targetDir], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (built.exitCode !== 0) throw new Error("cargo build of bench/null-server failed");
  return join(targetDir, "release", "null-server");
}

export async function startNullServer(): Promise<ServerProcess> {
  const server = await spawnServer("null-server", [build(), "0"], (output) => {
    const port = /listening on [\d.]+:(\d+)/.exec(output)?.[1];
    return port === undefined ? undefined : Number(port);
  });
  return { port: server.where, proc: server.proc, output: server.output, stop: server.stop };
}
