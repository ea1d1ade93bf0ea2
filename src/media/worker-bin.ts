/**
 * Where the mediasoup worker binary is. mediasoup's npm postinstall is disabled (it downloads), so
 * ./svc builds the worker from the package's own sources (media-worker/build) and installs it in
 * media-worker/dist/; the bootstrap also exports MEDIASOUP_WORKER_BIN pointing at it.
 *
 * mediasoup 3.27 reads MEDIASOUP_WORKER_BIN once, when its module is first imported (its
 * `workerBin` default). Under ./svc the variable is set before anything runs; code that may start
 * without it (tests run with `bun test` directly) should also pass
 * `workerBin: mediasoupWorkerBin()` to createWorker, which always wins.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../core/errors";
import { repoRoot } from "../cli/paths";

/** The worker binary to spawn: MEDIASOUP_WORKER_BIN when set, else the one ./svc installs. */
export function mediasoupWorkerBin(): string {
  const fromEnv = process.env.MEDIASOUP_WORKER_BIN;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return join(repoRoot, "media-worker/dist/mediasoup-worker");
}

/**
 * Makes mediasoup spawn the built worker (for a mediasoup module imported after this call; see
 * above). Fails early with a clear message when it has not been built, instead of mediasoup's own
 * spawn error on the first createWorker().
 */
export function useBuiltWorker(): void {
  const bin = mediasoupWorkerBin();
  if (!existsSync(bin)) {
    throw new SvcError("unavailable", `mediasoup worker binary not found at ${bin}: run ./svc once to build it (media-worker/build)`);
  }
  process.env.MEDIASOUP_WORKER_BIN = bin;
}
