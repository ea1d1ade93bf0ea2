/**
 * The child side of a service: `svc <name> [flags]` starts it, reports where it listens (to
 * `svc up` over IPC when there is a parent, and on stderr for a person), and stops it cleanly on
 * SIGINT or SIGTERM so nothing acknowledged is lost.
 */
import type { Logger } from "../core/log.ts";
import type { ReadyMessage, RunningService } from "../service.ts";

export async function runService(name: string, start: () => Promise<RunningService>, log: Logger): Promise<number> {
  const service = await start();
  const ready: ReadyMessage = { type: "ready", service: name, pid: process.pid, endpoints: service.endpoints };
  if (process.send) process.send(ready);
  else for (const e of service.endpoints) process.stderr.write(`[svc] ${name}: ${e.protocol} on ${e.address} — try: ${e.tryIt}\n`);

  const signal = await new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  log.info({ signal }, `stopping ${name}`);
  await service.stop();
  log.info(`${name} stopped`);
  return 0;
}
